import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, openCappedFile } from '../src/logger.js';

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));
const fresh = (): string => (dir = mkdtempSync(join(tmpdir(), 'kit-log-file-')));
const lineOf = (i: number): string => `${JSON.stringify({ msg: `line ${String(i).padStart(4, '0')}` })}\n`;
const linesIn = (path: string): string[] => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : []);

describe('openCappedFile: the log file in LOG_DIR stays bounded', () => {
  const max = 1000;

  it('renames the file <name>.log.1 when it reaches the cap and starts a new one: two files, the newest lines', () => {
    const path = join(fresh(), 'svc.log');
    const file = openCappedFile(path, max);
    for (let i = 0; i < 500; i += 1) file.write(lineOf(i));
    expect(readdirSync(dir).sort()).toEqual(['svc.log', 'svc.log.1']);
    // Each file ends at the line that reached the cap: under it by less than a line.
    for (const name of ['svc.log', 'svc.log.1']) expect(statSync(join(dir, name)).size).toBeLessThan(max + lineOf(0).length);
    const kept = [...linesIn(`${path}.1`), ...linesIn(path)];
    expect(kept.at(-1)).toBe(lineOf(499).trim());
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, k) => lineOf(500 - kept.length + k).trim()));
  });

  it('counts what the file already holds at start', () => {
    const path = join(fresh(), 'svc.log');
    const before = openCappedFile(path, max);
    // Each below the cap on its own, past it together.
    for (let i = 0; i < 30; i += 1) before.write(lineOf(i));
    const after = openCappedFile(path, max);
    for (let i = 30; i < 60; i += 1) after.write(lineOf(i));
    expect(existsSync(`${path}.1`)).toBe(true);
    expect(statSync(path).size).toBeLessThan(max);
  });

  it('shared by replicas on one volume: a file another has rotated is followed, not rotated again', () => {
    const path = join(fresh(), 'svc.log');
    const replicas = [openCappedFile(path, max), openCappedFile(path, max), openCappedFile(path, max)];
    for (let i = 0; i < 900; i += 1) replicas[i % 3]?.write(lineOf(i));
    expect(readdirSync(dir).sort()).toEqual(['svc.log', 'svc.log.1']);
    // Each replica writes up to the cap before it looks again: three replicas, at most three caps.
    for (const name of ['svc.log', 'svc.log.1']) expect(statSync(join(dir, name)).size).toBeLessThan(3 * (max + lineOf(0).length));
    expect([...linesIn(`${path}.1`), ...linesIn(path)]).toContain(lineOf(899).trim());
  });

  it('follows a file renamed away before it reached the cap (a rotation by hand or by another process)', () => {
    const path = join(fresh(), 'svc.log');
    const file = openCappedFile(path, max);
    file.write(lineOf(0));
    renameSync(path, join(dir, 'moved.log'));
    for (let i = 1; i < 60; i += 1) file.write(lineOf(i));
    // Not renamed again over the file it was: a new one started where the old one was.
    expect(existsSync(path)).toBe(true);
    expect(existsSync(`${path}.1`)).toBe(false);
    expect(linesIn(join(dir, 'moved.log')).length).toBeGreaterThan(40);
  });
});

describe('createLogger with a log directory', () => {
  it('appends its JSON lines to <logDir>/<name>.log, rotated at logFileMaxBytes', () => {
    const logDir = fresh();
    const logger = createLogger({ name: 'svc', production: true, logDir, logFileMaxBytes: 400, level: 'warn' });
    // Below the level: nothing is written, so stdout stays quiet too.
    for (let i = 0; i < 50; i += 1) logger.info(`quiet ${i}`);
    expect(readFileSync(join(logDir, 'svc.log'), 'utf8')).toBe('');
    for (let i = 0; i < 8; i += 1) logger.warn(`loud ${i}`);
    expect(readdirSync(logDir).sort()).toEqual(['svc.log', 'svc.log.1']);
    const last = linesIn(join(logDir, 'svc.log')).at(-1) ?? '{}';
    expect(JSON.parse(last)).toMatchObject({ level: 40, name: 'svc', msg: 'loud 7' });
  });
});
