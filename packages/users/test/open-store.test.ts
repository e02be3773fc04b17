import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '@sample-services/kit/config';
import { afterAll, describe, expect, it } from 'vitest';
import { readStoreConfig } from '../src/open-store.js';

const dir = mkdtempSync(join(tmpdir(), 'open-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
/** A file holding `text`, as a secret mounted at /run/secrets would. */
const secret = (text: string): string => {
  const path = join(dir, `secret-${(files += 1)}`);
  writeFileSync(path, text);
  return path;
};

describe('readStoreConfig: DATABASE_PASSWORD_FILE', () => {
  const url = 'postgresql://tester@db:5432/flaskapp';

  it('puts the file into the URL as its password, without one trailing newline', () => {
    const { databaseUrl } = readStoreConfig({ DATABASE_URL: url, DATABASE_PASSWORD_FILE: secret('s3cret\n') });
    expect(databaseUrl?.href).toBe('postgresql://tester:s3cret@db:5432/flaskapp');
  });

  it.each([
    ['no newline', 'abc', 'abc'],
    ['CRLF', 'abc\r\n', 'abc'],
    ['two newlines (only one goes)', 'abc\n\n', 'abc\n'],
    ['spaces (kept)', ' a b ', ' a b '],
  ])('keeps the rest of the text as it is: %s', (_case, text, password) => {
    const { databaseUrl } = readStoreConfig({ DATABASE_URL: url, DATABASE_PASSWORD_FILE: secret(text) });
    expect(decodeURIComponent(databaseUrl?.password ?? '')).toBe(password);
  });

  it('percent-encodes every character that would change the URL, and the driver decodes it back', () => {
    const password = 'p@ss:w/o?r#d%20&=+ é$';
    const { databaseUrl } = readStoreConfig({ DATABASE_URL: url, DATABASE_PASSWORD_FILE: secret(`${password}\n`) });
    expect(databaseUrl?.host).toBe('db:5432');
    expect(databaseUrl?.username).toBe('tester');
    expect(databaseUrl?.pathname).toBe('/flaskapp');
    // pg (pg-connection-string) reads the password with decodeURIComponent.
    expect(decodeURIComponent(databaseUrl?.password ?? '')).toBe(password);
    expect(new URL(databaseUrl?.href ?? '').password).toBe(databaseUrl?.password);
  });

  it('leaves the URL alone when the variable is unset or blank', () => {
    expect(readStoreConfig({ DATABASE_URL: 'postgresql://u:pw@db/x' }).databaseUrl?.password).toBe('pw');
    expect(readStoreConfig({ DATABASE_URL: url, DATABASE_PASSWORD_FILE: '  ' }).databaseUrl?.href).toBe(url);
  });

  it('is a ConfigError naming the variable when the file cannot be read, without its content', () => {
    const missing = join(dir, 'missing');
    expect(() => readStoreConfig({ DATABASE_URL: url, DATABASE_PASSWORD_FILE: missing })).toThrow(
      new ConfigError(`DATABASE_PASSWORD_FILE: cannot read "${missing}" (ENOENT)`),
    );
    expect(() => readStoreConfig({ DATABASE_URL: url, DATABASE_PASSWORD_FILE: dir })).toThrow(
      /^DATABASE_PASSWORD_FILE: cannot read .*EISDIR/,
    );
  });

  it('is a ConfigError when the file is empty', () => {
    const empty = secret('\n');
    expect(() => readStoreConfig({ DATABASE_URL: url, DATABASE_PASSWORD_FILE: empty })).toThrow(
      new ConfigError(`DATABASE_PASSWORD_FILE: "${empty}" is empty`),
    );
  });

  it('is a ConfigError without DATABASE_URL, or with a URL that has its own password', () => {
    const path = secret('pw');
    expect(() => readStoreConfig({ DATABASE_PASSWORD_FILE: path })).toThrow(ConfigError);
    expect(() => readStoreConfig({ DATABASE_PASSWORD_FILE: path })).toThrow(/^DATABASE_PASSWORD_FILE is set but DATABASE_URL is not/);
    expect(() => readStoreConfig({ DATABASE_URL: 'postgresql://u:other@db/x', DATABASE_PASSWORD_FILE: path })).toThrow(
      /^DATABASE_PASSWORD_FILE is set but DATABASE_URL has a password too/,
    );
  });
});

describe('readStoreConfig: DATABASE_URL_FILE', () => {
  const url = 'postgresql://tester:s3cret@db:5432/flaskapp';

  it('reads the whole URL from the file, surrounding whitespace dropped', () => {
    expect(readStoreConfig({ DATABASE_URL_FILE: secret(`${url}\n`) }).databaseUrl?.href).toBe(url);
    expect(readStoreConfig({ DATABASE_URL_FILE: secret(`  ${url}\r\n`) }).databaseUrl?.href).toBe(url);
  });

  it('takes the password from DATABASE_PASSWORD_FILE as with DATABASE_URL', () => {
    const { databaseUrl } = readStoreConfig({
      DATABASE_URL_FILE: secret('postgresql://tester@db:5432/flaskapp'),
      DATABASE_PASSWORD_FILE: secret('p@ss\n'),
    });
    expect(databaseUrl?.href).toBe('postgresql://tester:p%40ss@db:5432/flaskapp');
  });

  it('is a ConfigError when DATABASE_URL is set too', () => {
    expect(() => readStoreConfig({ DATABASE_URL: url, DATABASE_URL_FILE: secret(url) })).toThrow(
      new ConfigError('DATABASE_URL and DATABASE_URL_FILE are both set: keep one of them'),
    );
  });

  it.each([
    ['not a URL', 'tester s3cret at db', 'does not hold a URL'],
    ['another scheme', 'mysql://tester:s3cret@db/x', 'must start with postgresql:// or postgres://'],
    ['empty', ' \n', 'is empty'],
  ])('is a ConfigError that never quotes the file (it may hold the password): %s', (_case, text, message) => {
    const path = secret(text);
    let error: unknown;
    try {
      readStoreConfig({ DATABASE_URL_FILE: path });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(message);
    expect((error as Error).message).toContain(path);
    expect((error as Error).message).not.toContain('s3cret');
  });

  it('is a ConfigError naming the variable when the file cannot be read', () => {
    const missing = join(dir, 'missing');
    expect(() => readStoreConfig({ DATABASE_URL_FILE: missing })).toThrow(
      new ConfigError(`DATABASE_URL_FILE: cannot read "${missing}" (ENOENT)`),
    );
  });
});

describe('readStoreConfig: DB_POOL_SIZE', () => {
  it('is 10 connections unless set, any integer from 2 to 1000 when set, and one line naming it otherwise', () => {
    expect(readStoreConfig({}).poolSize).toBe(10);
    expect(readStoreConfig({ DB_POOL_SIZE: '4' }).poolSize).toBe(4);
    for (const wrong of ['1', '1001', 'ten', '-3'])
      expect(() => readStoreConfig({ DB_POOL_SIZE: wrong })).toThrow(`DB_POOL_SIZE must be an integer from 2 to 1000, got "${wrong}"`);
  });
});
