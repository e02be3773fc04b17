import { describe, expect, it } from 'vitest';
import { ConfigError, readChoice, readPort, readServiceConfig, readUrl } from '../src/config.js';

describe('configuration from the environment', () => {
  it('uses defaults when variables are unset or blank', () => {
    expect(readServiceConfig({ PORT: ' ' }, { port: 3000, modeVariables: ['NODE_ENV'] })).toEqual({
      port: 3000,
      host: '0.0.0.0',
      mode: 'development',
      production: false,
      logDir: undefined,
      logLevel: 'info',
      logFormat: 'auto',
      maxConnections: 10_000,
    });
  });

  it('reads PORT, HOST, NODE_ENV, LOG_DIR, LOG_LEVEL and MAX_CONNECTIONS', () => {
    const config = readServiceConfig(
      {
        PORT: '8080',
        HOST: '127.0.0.1',
        NODE_ENV: 'production',
        LOG_DIR: '/app/logs',
        LOG_LEVEL: 'debug',
        MAX_CONNECTIONS: '64',
      },
      { port: 3000, modeVariables: ['NODE_ENV'] },
    );
    expect(config).toEqual({
      port: 8080,
      host: '127.0.0.1',
      mode: 'production',
      production: true,
      logDir: '/app/logs',
      logLevel: 'debug',
      logFormat: 'auto',
      maxConnections: 64,
    });
  });

  it('takes the run mode from the first variable set', () => {
    const defaults = { name: 'svc', port: 5000, modeVariables: ['FLASK_ENV', 'NODE_ENV'] };
    expect(readServiceConfig({ FLASK_ENV: 'production', NODE_ENV: 'development' }, defaults).mode).toBe('production');
    expect(readServiceConfig({ NODE_ENV: 'production' }, defaults).production).toBe(true);
  });

  it.each(['abc', '70000', '-1', '3000.5', '1e3', '0x50'])('rejects PORT=%s naming the variable', (value) => {
    expect(() => readPort({ PORT: value }, 'PORT', 3000)).toThrow(
      new ConfigError(`PORT must be an integer from 0 to 65535, got "${value}"`),
    );
  });

  it('rejects an unknown LOG_LEVEL', () => {
    expect(() => readChoice({ LOG_LEVEL: 'loud' }, 'LOG_LEVEL', 'info', ['info', 'debug'])).toThrow(
      'LOG_LEVEL must be one of info, debug, got "loud"',
    );
  });

  it('checks URLs and their protocol', () => {
    expect(readUrl({}, 'UPSTREAM_URL', 'http://web:3000', ['http:']).host).toBe('web:3000');
    expect(() => readUrl({ UPSTREAM_URL: 'not a url' }, 'UPSTREAM_URL', 'http://web:3000', ['http:'])).toThrow(
      'UPSTREAM_URL must be a URL, got "not a url"',
    );
    expect(() => readUrl({ UPSTREAM_URL: 'ftp://x' }, 'UPSTREAM_URL', 'http://web:3000', ['http:'])).toThrow(
      'UPSTREAM_URL must start with http://, got "ftp://..."',
    );
  });

  it('never quotes what comes before the @ of a URL it cannot read: it may be a password', () => {
    const read = (value: string) => () => readUrl({ DATABASE_URL: value }, 'DATABASE_URL', 'postgresql://db', ['postgresql:']);
    expect(read('postgresql://user:s3cret@db:99999/x')).toThrow('DATABASE_URL must be a URL, got "...@db:99999/x"');
    expect(read('user s3cret@db')).toThrow('DATABASE_URL must be a URL, got "...@db"');
    expect(read('mysql://user:s3cret@db/x')).toThrow('DATABASE_URL must start with postgresql://, got "mysql://..."');
  });
});
