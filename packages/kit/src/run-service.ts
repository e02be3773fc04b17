import { once } from 'node:events';
import { lstat, rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { admitConnections, type Admission } from './admission/connection-admission.js';
import { ConfigError, type Env, type ServiceConfig, type ServiceIdentity } from './config.js';
import { createLogger, type Logger } from './logger.js';
import { markProbeConnections } from './probe-listener.js';
import type { App } from './server.js';
import { startTracing, stopTracing, traceLogFields } from './tracing.js';

export interface BuiltService {
  app: App;
}

export interface ServiceDefinition<Config extends ServiceConfig> {
  /**
   * Reads the service's whole configuration from the environment, the only place it is read (the
   * table of docs/configuration.md is checked against these readers); throws ConfigError on a bad value.
   */
  readConfig: (env: Env) => Config;
  /**
   * Builds the app; may wait for a database. The app comes back inside an object, never as a
   * promise's value: a Fastify instance is a thenable, and awaiting it would boot it there.
   */
  build: (context: { config: Config; logger: Logger }) => BuiltService | Promise<BuiltService>;
}

/** Connections that may wait for a place, whatever MAX_CONNECTIONS is: a waiting one costs a socket and its buffers. */
const WAITING = 16_384;

/**
 * MAX_CONNECTIONS served at once, up to WAITING more waiting, any beyond closed unanswered (logged at
 * most once a second, with how many). As the app starts closing, the port stops accepting, the waiting
 * connections are closed, and the close waits for the served ones to finish their answers.
 */
function admitClients(app: App, maxConnections: number, logger: Logger): Admission {
  let dropped = 0;
  let loggedAt = 0;
  const admission = admitConnections(app.server, {
    places: maxConnections,
    waiting: WAITING,
    onDrop: () => {
      dropped += 1;
      if (Date.now() - loggedAt < 1000) return;
      loggedAt = Date.now();
      logger.warn({ dropped }, `connections closed unanswered: ${maxConnections} served and as many waiting as allowed (MAX_CONNECTIONS)`);
      dropped = 0;
    },
  });
  app.addHook('preClose', async () => admission.close());
  return admission;
}

/**
 * Where the HTTP server itself listens: the probe socket (PROBE_SOCKET), the probe port on PROBE_HOST
 * (PROBE_PORT), or else a loopback port of the system's choosing. The public port is the
 * admission's; the server must listen somewhere all the same, as Node enforces its headers and
 * request timeouts only on a listening server. Probes come here straight to Node, never waiting in
 * the port's accept queue behind a flood.
 */
async function probeAddress({
  probeSocket: path,
  probePort,
  probeHost,
}: ServiceConfig): Promise<{ path: string } | { port: number; host: string }> {
  if (probePort !== undefined) return { port: probePort, host: probeHost };
  if (path === undefined) return { port: 0, host: '127.0.0.1' };
  // '@name' is an abstract socket: no file, and only the container's own network namespace reaches it.
  if (path.startsWith('@')) return { path: `\0${path.slice(1)}` };
  // A socket file left by a process that was killed; anything else at that path stays, and listen fails on it.
  if ((await lstat(path).catch(() => undefined))?.isSocket() === true) await rm(path);
  return { path };
}

/** How long in-flight requests may take to finish after SIGTERM before we give up. */
const SHUTDOWN_GRACE_MS = 10_000;
/**
 * At most this long, and within the grace period, the spans still buffered at exit are exported: a
 * live collector takes them in milliseconds, and one that does not answer (the exporter retries
 * for 10 s) must not hold the exit.
 */
const FLUSH_LIMIT_MS = 2_000;

/** Exports the spans still buffered (tracing on), waiting no later than `deadline` (Date.now() time). */
async function flushSpans(logger: Logger, deadline: number): Promise<void> {
  const late = sleep(Math.max(0, Math.min(deadline - Date.now(), FLUSH_LIMIT_MS)), 'late', { ref: false });
  if ((await Promise.race([stopTracing().then(() => 'flushed'), late])) === 'late') {
    logger.warn(`the spans still buffered were dropped: the collector did not take them within ${FLUSH_LIMIT_MS} ms`);
  }
}

function fail(name: string, message: string): never {
  process.stderr.write(`${name}: ${message}\n`);
  process.exit(1);
}

function listenErrorMessage(error: NodeJS.ErrnoException, config: ServiceConfig): string | undefined {
  if (error.code === 'EADDRINUSE') return `port ${config.port} is already in use; set PORT to another port`;
  if (error.code === 'EACCES')
    return `no permission to listen on port ${config.port}; set PORT to a port above 1023 or run with that right`;
  if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND')
    return `cannot listen on host ${config.host}; set HOST to a local address`;
  return undefined;
}

/**
 * The whole life of a service process: read and check the configuration (one line and
 * exit 1 when it is wrong), build the app, listen, and on SIGTERM or SIGINT stop accepting,
 * let in-flight requests finish, close pools (the app's onClose hooks) and exit 0.
 */
export async function runService<Config extends ServiceConfig>(
  service: ServiceIdentity,
  definition: ServiceDefinition<Config>,
  env: Env = process.env,
): Promise<void> {
  const { name } = service;
  let config: Config;
  let logger: Logger;
  try {
    config = definition.readConfig(env);
    logger = createLogger({
      name,
      production: config.production,
      format: config.logFormat,
      logDir: config.logDir,
      level: config.logLevel,
      // With tracing on, every line written while serving a traced request carries its trace_id and span_id.
      ...(config.tracing.enabled && { mixin: traceLogFields }),
    });
  } catch (error) {
    if (error instanceof ConfigError) fail(name, `invalid configuration: ${error.message}`);
    throw error;
  }

  process.on('uncaughtException', (error) => {
    logger.fatal({ err: error }, 'uncaught exception; exiting');
    process.exit(1);
  });
  process.on('unhandledRejection', (reason) => {
    logger.fatal({ err: reason }, 'unhandled rejection; exiting');
    process.exit(1);
  });

  // Signal handlers go in before the app is built (which may wait on a database) and before
  // it listens: as PID 1 in a container, a process without them would ignore SIGTERM.
  let app: App | undefined;
  let closing = false;
  const shutdown = (signal: NodeJS.Signals): void => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down');
    if (app === undefined) process.exit(0); // nothing is served yet: nothing to drain
    // The flush ends before the grace period does, so the exit is never the forced one.
    const deadline = Date.now() + SHUTDOWN_GRACE_MS - 500;
    setTimeout(() => {
      logger.error(`requests still running after ${SHUTDOWN_GRACE_MS} ms; exiting anyway`);
      process.exit(1);
    }, SHUTDOWN_GRACE_MS).unref();
    app
      .close()
      .then(() => flushSpans(logger, deadline))
      .then(
        () => {
          logger.info('stopped');
          process.exit(0);
        },
        (error: unknown) => {
          logger.error({ err: error }, 'error while closing');
          process.exit(1);
        },
      );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);

  // Before the app is built: its server and stores see whether tracing is on (tracing.ts).
  if (config.tracing.enabled) await startTracing(config.tracing, logger);

  try {
    ({ app } = await definition.build({ config, logger }));
  } catch (error) {
    if (error instanceof ConfigError) fail(name, `invalid configuration: ${error.message}`);
    throw error;
  }

  const admission = admitClients(app, config.maxConnections, logger);
  markProbeConnections(app.server, admission.serves);
  try {
    // The longest accept queue the kernel allows (it caps this at somaxconn): with Node's 511, a
    // flood's connection burst overflowed it and clients waited out SYN retransmits.
    admission.listener.listen({ port: config.port, host: config.host, backlog: 65535 });
    await once(admission.listener, 'listening');
  } catch (error) {
    const message = listenErrorMessage(error as NodeJS.ErrnoException, config);
    if (message !== undefined) fail(name, message);
    logger.fatal({ err: error }, 'could not start');
    process.exit(1);
  }
  try {
    await app.listen(await probeAddress(config));
  } catch (error) {
    fail(name, `cannot listen on ${probeListenerName(config)}: ${(error as Error).message}`);
  }
  admission.open();
  const address = admission.listener.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  // The line's `port` field is how the stack runner, the tests and the bench learn the port.
  logger.info({ port, mode: config.mode }, `${service.startedMessage} ${port}`);
}

/** The probe listener as its setting names it, for a message. */
function probeListenerName(config: ServiceConfig): string {
  if (config.probeSocket !== undefined) return `PROBE_SOCKET ${config.probeSocket}`;
  if (config.probePort !== undefined) return `PROBE_PORT ${config.probePort}`;
  return 'a loopback port';
}
