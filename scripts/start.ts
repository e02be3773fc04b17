/**
 * `npm start -- [stack]`: runs a stack of the manifest as local processes, members in their
 * start order, each once the one before it is healthy; every output line shown readably and
 * prefixed with the service's name; SIGINT/SIGTERM stops them all, last started first.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError, readPort } from '@sample-services/kit/config';
import {
  portVariableOf,
  services,
  stackNames,
  stacks,
  startedLine,
  type ServiceName,
  type StackMember,
  type StackName,
} from '@sample-services/manifest';
import { prettyFactory } from 'pino-pretty';
import { serviceCommand, startListeningProcess, type ListeningProcess } from '@sample-services/processes/listening-process';
import { nearbyFreePort, portProblem } from './port-choice.js';

const HEALTH_TIMEOUT_MS = 30_000;

function fail(message: string): never {
  process.stderr.write(`start: ${message}\n`);
  process.exit(1);
}

async function waitHealthy(service: ServiceName, running: ListeningProcess): Promise<void> {
  let ended = false;
  void running.exited.then(() => (ended = true));
  const deadline = Date.now() + HEALTH_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (ended) throw new Error(`${service} exited before it was healthy`);
    try {
      const res = await fetch(`${running.baseUrl}/health`, { signal: AbortSignal.timeout(2_000) });
      await res.body?.cancel();
      if (res.status === 200) return;
    } catch {
      // not answering yet
    }
    await sleep(100);
  }
  throw new Error(`${service} was not healthy on port ${running.port} within ${HEALTH_TIMEOUT_MS / 1000} s`);
}

// The services log JSON lines when their output is not a terminal: shown here as the kit shows
// them in one (the prefix already names the service); other lines pass through unchanged.
const pretty = prettyFactory({ colorize: process.stdout.isTTY, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,name' });

function show(service: ServiceName, line: string, stream: 'stdout' | 'stderr'): void {
  const text = pretty(line).trimEnd();
  (stream === 'stdout' ? process.stdout : process.stderr).write(text.replace(/^/gm, `[${service}] `) + '\n');
}

const stackName = process.argv[2] ?? 'simple';
if (!stackNames.includes(stackName as StackName)) fail(`unknown stack "${stackName}"; choose one of ${stackNames.join(', ')}`);
const members: readonly StackMember[] = stacks[stackName as StackName].members;

/**
 * Each member's port: the spec's default or its variable. A default that cannot be had (privileged,
 * or taken) gives way to one that can, so a first run works for any user; a port the user chose
 * explicitly is kept, and the start fails in one line when it cannot be had.
 */
const requestedPorts = new Map<StackMember, number>();
try {
  for (const member of members)
    requestedPorts.set(member, readPort(process.env, portVariableOf(member.service), services[member.service].port));
  const reserved = new Set(requestedPorts.values());
  for (const [member, port] of requestedPorts) {
    if (port === 0) continue;
    const variable = portVariableOf(member.service);
    const problem = await portProblem(port, '0.0.0.0');
    if (problem === undefined) continue;
    if (process.env[variable]?.trim()) throw new Error(`port ${port} ${problem}; set ${variable} to another port`);
    const instead = await nearbyFreePort(port, '0.0.0.0', reserved);
    reserved.add(instead);
    requestedPorts.set(member, instead);
    const where = instead === 0 ? 'a port the system chooses' : `port ${instead}`;
    process.stdout.write(`start: port ${port} ${problem}; ${member.service} serves on ${where} instead (set ${variable} to choose one)\n`);
  }
} catch (error) {
  fail(error instanceof ConfigError ? `invalid configuration: ${error.message}` : (error as Error).message);
}

/** The members started so far, by the name the others link to them with. */
const running = new Map<string, ListeningProcess>();
let starting: Promise<unknown> = Promise.resolve();
let stopping = false;

async function stopAll(exitCode: number): Promise<never> {
  stopping = true;
  await starting.catch(() => undefined); // a member being started is stopped too, once it listens
  for (const started of [...running.values()].reverse()) await started.stop('SIGTERM');
  process.exit(exitCode);
}

process.once('SIGINT', () => void stopAll(0));
process.once('SIGTERM', () => void stopAll(0));

/** Each link variable set to the local address of the member it names, started before. */
function linkEnv(member: StackMember): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [variable, target] of Object.entries(member.links ?? {})) env[variable] = `http://127.0.0.1:${running.get(target)?.port}`;
  return env;
}

for (const member of members) {
  const { service } = member;
  const { args, env } = serviceCommand(service);
  const launch = startListeningProcess({
    label: service,
    command: process.execPath,
    args,
    // The image's variables, unless the caller set them (as a deployment may).
    env: { ...env, ...process.env, PORT: String(requestedPorts.get(member)), ...linkEnv(member) },
    startedMessage: (port) => startedLine(service, port),
    onLine: (line, stream) => show(service, line, stream),
    timeoutMs: HEALTH_TIMEOUT_MS,
  });
  starting = launch;
  try {
    const started = await launch;
    running.set(member.as, started);
    if (stopping) break;
    void started.exited.then((code) => {
      if (stopping) return;
      process.stderr.write(
        `start: ${service} stopped unexpectedly (${code === null ? 'killed by a signal' : `exit ${code}`}); stopping the stack\n`,
      );
      void stopAll(1);
    });
    await waitHealthy(service, started);
    process.stdout.write(`start: ${service} is healthy on http://127.0.0.1:${started.port}\n`);
  } catch (error) {
    if (stopping) break;
    // Only the first line: the service's own output is already on screen.
    process.stderr.write(`start: ${(error as Error).message.split('\n')[0]}\n`);
    await stopAll(1);
  }
}
// The last member started is the one to open: the proxy, the frontend, or the only one.
const front = running.get(members[members.length - 1]?.as ?? '');
if (!stopping) process.stdout.write(`start: stack "${stackName}" is up; open ${front?.baseUrl ?? ''}/ (Ctrl-C stops it)\n`);
