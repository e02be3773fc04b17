/**
 * Starting a program that listens and learning its port: `npm start` runs its stack with it, and the
 * tests and the bench their services, so it is a package of its own rather than part of the test kit.
 */
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { ServiceName } from '@sample-services/manifest';

/** The repository's root directory: where the compiled services are, and where processes start by default. */
const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));

/** The compiled entry point of a service (npm run build), relative to the repository root: what its image runs. */
export const serviceEntry = (name: ServiceName): string => `services/${name}/dist/main.js`;

/**
 * Node's arguments and variables for a service, as its image runs it: the OpenTelemetry preload
 * (packages/telemetry), which loads nothing unless an OTLP endpoint is set, then the entry point; the
 * spans' service.name is the service's name unless the caller's environment sets OTEL_SERVICE_NAME.
 */
export const serviceCommand = (name: ServiceName): { args: string[]; env: Record<string, string> } => ({
  args: ['--import=@sample-services/telemetry', serviceEntry(name)],
  env: { OTEL_SERVICE_NAME: name },
});

export interface ListeningProcessOptions {
  /** Names the process in errors, e.g. the service's name. */
  label: string;
  command: string;
  args: readonly string[];
  /** The process's whole environment: nothing is inherited that is not passed here. */
  env: NodeJS.ProcessEnv;
  /** Default: the repository root. */
  cwd?: string;
  /**
   * The start-up line's `msg` for the port it announces, e.g. `(port) => startedLine('simple', port)`;
   * another message fails the start. Unset: the first JSON line with a `port` is the start-up line.
   */
  startedMessage?: (port: number) => string;
  /**
   * The port, when the caller chose it and the program announces nothing on stdout as JSON (nginx,
   * or a service in development, which logs readable lines): the start waits until it accepts connections.
   */
  port?: number;
  /** Called with each line the process writes, as it comes (the stack runner shows them). */
  onLine?: (line: string, stream: 'stdout' | 'stderr') => void;
  /** Default 15 s. */
  timeoutMs?: number;
}

export interface ListeningProcess {
  pid: number;
  port: number;
  baseUrl: string;
  /** Every line the process wrote so far, stdout and stderr. */
  lines: string[];
  /** Resolves with the exit code (null when killed by a signal) once the process ended and its output is read. */
  exited: Promise<number | null>;
  /** Sends the signal (default SIGTERM) unless the process has ended, and waits for the exit code. */
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

/**
 * The start-up line every service writes once it listens (`{"level":30,...,"port":N,"msg":"..."}`,
 * the kit's runService; the bench's baselines write the same fields): its port and message, or
 * undefined for any other line.
 */
function parseStartupLine(line: string): { port: number; msg: unknown } | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const record = JSON.parse(line) as { port?: unknown; msg?: unknown };
    return Number.isInteger(record.port) ? { port: record.port as number, msg: record.msg } : undefined;
  } catch {
    return undefined;
  }
}

/** Resolves with the port once it accepts connections, polling every millisecond (the bench times start-ups). */
async function waitAccepting(port: number, givenUp: () => boolean): Promise<number> {
  const accepts = (): Promise<boolean> =>
    new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  while (!givenUp() && !(await accepts())) await sleep(1);
  return port;
}

/**
 * Starts a program that listens on 127.0.0.1 and learns its port from the JSON start-up line on
 * its stdout, so callers can pass PORT=0 and never race for ports. Rejects, after killing it,
 * when the program exits first, announces another message, or takes longer than the timeout.
 */
export async function startListeningProcess(options: ListeningProcessOptions): Promise<ListeningProcess> {
  const { label, startedMessage, onLine, timeoutMs = 15_000 } = options;
  const child = spawn(options.command, options.args, { cwd: options.cwd ?? repoRoot, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  // 'close', not 'exit': by then every line the process wrote has been read.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code: number | null) => resolve(code)));

  let onStartupLine: (startup: { port: number; msg: unknown }) => void = () => undefined;
  for (const [input, stream] of [
    [child.stdout, 'stdout'],
    [child.stderr, 'stderr'],
  ] as const) {
    createInterface({ input }).on('line', (line) => {
      lines.push(line);
      onLine?.(line, stream);
      const startup = stream === 'stdout' ? parseStartupLine(line) : undefined;
      if (startup !== undefined) onStartupLine(startup);
    });
  }

  const port = await new Promise<number>((resolve, reject) => {
    let settled = false;
    const succeed = (listeningOn: number): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(listeningOn);
    };
    const fail = (why: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      // The reason on the first line, then the last lines the process wrote.
      reject(new Error([`${label} ${why}`, ...lines.slice(-20)].join('\n')));
    };
    const timer = setTimeout(() => fail(`did not listen within ${timeoutMs} ms`), timeoutMs);
    child.once('error', (error) => fail(`could not be started (${error.message})`));
    void exited.then((code) => fail(`exited with ${code ?? child.signalCode} before it listened`));
    if (options.port !== undefined) {
      void waitAccepting(options.port, () => settled).then(succeed);
      return;
    }
    onStartupLine = ({ port: announced, msg }) => {
      const expected = startedMessage?.(announced);
      if (expected === undefined || msg === expected) succeed(announced);
      else fail(`announced "${String(msg)}" instead of "${expected}"`);
    };
  });

  return {
    pid: child.pid ?? 0,
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    lines,
    exited,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
