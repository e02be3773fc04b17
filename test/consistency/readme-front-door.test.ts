import { describe, expect, it } from 'vitest';
import { docsPages, readRepoFile } from './support/repo-files.js';

const readme = readRepoFile('README.md');

describe('README.md, the front door', () => {
  it('opens with the two commands for a fresh machine: install and run, then test', () => {
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const commands = firstBlock.split('\n').map((line) => line.split('#', 1)[0]?.trim());
    expect(commands.filter(Boolean)).toEqual(['npm install && npm start', 'npm test']);
    expect(readme.indexOf('```sh')).toBeLessThan(readme.indexOf('\n## '));
  });

  it('stays short: at most 200 lines, the rest in docs/', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(200);
  });

  it('links every page of docs/', () => {
    expect(docsPages().filter((page) => !readme.includes(`](${page}`))).toEqual([]);
  });
});
