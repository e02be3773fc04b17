/**
 * `npm start -- [stack]`: runs a whole stack as local processes, in dependency order,
 * each service started once the one it depends on is healthy; output prefixed per
 * service; SIGINT/SIGTERM stops them all, last started first.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError, readPort } from '@svc/kit';
import { serviceEntry, stacks, type ServiceName, type StackMember } from './stacks.js';

const HEALTH_TIMEOUT_MS = 30_000;

function fail(message: string): never {
  process.stderr.write(`start: ${message}\n`);
  process.exit(1);
}

/** Resolves when the port can be bound, with a message naming the variable when it cannot. */
function checkPortFree(port: number, variable: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => {
      const reason = error.code === 'EACCES' ? 'needs more privileges' : 'is already in use';
      reject(new Error(`port ${port} ${reason}; set ${variable} to another port`));
    });
    probe.listen(port, '0.0.0.0', () => probe.close(() => resolve()));
  });
}

async function waitHealthy(member: StackMember, port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + HEALTH_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${member.service} exited before it was healthy`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(2_000) });
      await res.body?.cancel();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${member.service} was not healthy on port ${port} within ${HEALTH_TIMEOUT_MS / 1000} s`);
}

function prefixOutput(name: string, child: ChildProcess): void {
  const tag = `[${name}] `;
  for (const [input, output] of [
    [child.stdout, process.stdout],
    [child.stderr, process.stderr],
  ] as const) {
    if (input) createInterface({ input }).on('line', (line) => output.write(tag + line + '\n'));
  }
}

const stackName = process.argv[2] ?? 'simple';
const stack = stacks[stackName];
if (stack === undefined) fail(`unknown stack "${stackName}"; choose one of ${Object.keys(stacks).join(', ')}`);

const ports: Partial<Record<ServiceName, number>> = {};
try {
  for (const member of stack) ports[member.service] = readPort(process.env, member.portVariable, member.defaultPort);
  for (const member of stack) await checkPortFree(ports[member.service] as number, member.portVariable);
} catch (error) {
  fail(error instanceof ConfigError ? `invalid configuration: ${error.message}` : (error as Error).message);
}

const children: { name: ServiceName; process: ChildProcess }[] = [];
let stopping = false;

async function stopAll(exitCode: number): Promise<never> {
  stopping = true;
  for (const { process: child } of [...children].reverse()) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
  process.exit(exitCode);
}

process.once('SIGINT', () => void stopAll(0));
process.once('SIGTERM', () => void stopAll(0));

for (const member of stack) {
  const port = ports[member.service] as number;
  const child = spawn(process.execPath, [serviceEntry(member.service)], {
    env: { ...process.env, PORT: String(port), ...member.env?.(ports) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push({ name: member.service, process: child });
  prefixOutput(member.service, child);
  child.once('exit', (code, signal) => {
    if (stopping) return;
    process.stderr.write(`start: ${member.service} stopped unexpectedly (${signal ?? `exit ${code}`}); stopping the stack\n`);
    void stopAll(1);
  });
  try {
    await waitHealthy(member, port, child);
  } catch (error) {
    process.stderr.write(`start: ${(error as Error).message}\n`);
    await stopAll(1);
  }
  process.stdout.write(`start: ${member.service} is healthy on http://127.0.0.1:${port}\n`);
}
process.stdout.write(`start: stack "${stackName}" is up; Ctrl-C stops it\n`);
