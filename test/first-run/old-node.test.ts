/**
 * The README's first command on a distribution's Node older than the project needs (the machine's
 * /usr/bin/node, or OLD_NODE): a copy of the checkout installs with it, brings Node 24 into
 * node_modules (scripts/own-node.cjs), and `npm start` serves variant A through the proxy.
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { repoRoot } from '@sample-services/testing/repo-root';
import { expect, it, onTestFinished } from 'vitest';

const oldNode = process.env.OLD_NODE ?? '/usr/bin/node';
const versionOf = (node: string): string | undefined => {
  try {
    return execFileSync(node, ['-p', 'process.versions.node']).toString().trim();
  } catch {
    return undefined;
  }
};
const oldVersion = versionOf(oldNode);
const isOld = oldVersion !== undefined && Number(oldVersion.split('.')[0]) < 22;
if (process.env.CI === 'true' && !isOld)
  throw new Error(`CI=true needs a Node older than 22 at ${oldNode} (OLD_NODE): found ${oldVersion ?? 'none'}`);

/** The checkout's files as git sees them (tracked, and new ones not ignored), without node_modules or builds. */
function copyCheckout(): string {
  const copy = mkdtempSync(join(tmpdir(), 'first-run-'));
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: repoRoot }).toString().split('\0');
  for (const file of files.filter(Boolean)) cpSync(join(repoRoot, file), join(copy, file));
  return copy;
}

/** A PATH whose node and npm are the old Node's, ahead of any newer one. */
function pathWithOldNode(): string {
  const bin = mkdtempSync(join(tmpdir(), 'old-node-bin-'));
  symlinkSync(oldNode, join(bin, 'node'));
  symlinkSync(join(dirname(oldNode), 'npm'), join(bin, 'npm'));
  return `${bin}:${process.env.PATH ?? ''}`;
}

it.runIf(isOld)(`installs and starts on Node ${oldVersion ?? '(none older than 22)'}, with Node 24 brought into node_modules`, async () => {
  const copy = copyCheckout();
  onTestFinished(() => rmSync(copy, { recursive: true, force: true }));
  const env = { ...process.env, PATH: pathWithOldNode(), CI: undefined, npm_config_loglevel: 'warn' };

  const install = execFileSync('npm', ['install', '--no-audit', '--no-fund'], { cwd: copy, env, stdio: ['ignore', 'pipe', 'pipe'] });
  expect(install.toString()).not.toContain('npm error');
  expect(execFileSync(join(copy, 'node_modules/.bin/node'), ['-v']).toString()).toMatch(/^v24\./);

  // detached: npm, its shell, tsx and the services form one group, stopped together.
  const start = spawn('npm', ['start'], { cwd: copy, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => start.once('exit', resolve));
  onTestFinished(async () => {
    // Ctrl-C, as the README says: every process of the group gets SIGINT.
    if (start.exitCode === null) process.kill(-(start.pid ?? 0), 'SIGINT');
    const stoppedAt = Date.now();
    await exited;
    console.log(`stopped in ${Date.now() - stoppedAt} ms`);
  });
  let output = '';
  start.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const lines = createInterface({ input: start.stdout });
  let url: string | undefined;
  for await (const line of lines) {
    output += `${line}\n`;
    url = /is up; open (http:\/\/\S+)/.exec(line)?.[1];
    if (url !== undefined) break;
  }
  expect(url, output).toBeDefined();
  const answer = await fetch(url ?? '');
  expect(answer.status).toBe(200);
  expect(await answer.json()).toMatchObject({ message: 'Hello from Docker!' });
  expect(output).not.toMatch(/TypeError|SIGSEGV/);
});
