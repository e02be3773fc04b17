import closeWithGrace from 'close-with-grace';
import { ConfigError, type Env, type ServiceConfig, type ServiceIdentity } from './config.js';
import { createLogger, type Logger } from './logger.js';
import type { App } from './server.js';

export interface BuiltService {
  app: App;
}

export interface ServiceDefinition<Config extends ServiceConfig> {
  /** Reads the service's whole configuration, the only place it is read; throws ConfigError on a bad value. */
  readConfig: (env: Env) => Config;
  /**
   * Builds the app; may wait for a database. The app comes back inside an object: a Fastify
   * instance is a thenable, and awaiting it as a promise's value would boot it there.
   */
  build: (context: { config: Config; logger: Logger }) => BuiltService | Promise<BuiltService>;
}

function fail(name: string, message: string): never {
  process.stderr.write(`${name}: ${message}\n`);
  process.exit(1);
}

/** How long in-flight requests may take to finish after SIGTERM before we give up. */
const SHUTDOWN_GRACE_MS = 10_000;

/**
 * A start-up failure the operator must act on, its message saying what (a failed schema migration):
 * the service prints it as one line and exits 1 instead of starting.
 */
export class StartError extends Error {
  override name = 'StartError';
}

/** Runs `step`, a ConfigError or a StartError ending the process with one line. */
async function configured<T>(name: string, step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof ConfigError) fail(name, `invalid configuration: ${error.message}`);
    if (error instanceof StartError) fail(name, error.message);
    throw error;
  }
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
 * The whole life of a service process: read and check the configuration (one line and exit 1 when
 * it is wrong), build the app, listen, and on SIGTERM or SIGINT stop accepting, let in-flight
 * requests finish, close pools (the app's onClose hooks) and exit 0 (close-with-grace).
 */
export async function runService<Config extends ServiceConfig>(
  service: ServiceIdentity,
  definition: ServiceDefinition<Config>,
  env: Env = process.env,
): Promise<void> {
  const { name } = service;
  const config = await configured(name, () => definition.readConfig(env));
  const logger = await configured(name, () =>
    createLogger({ name, production: config.production, format: config.logFormat, logDir: config.logDir, level: config.logLevel }),
  );

  // Before the app is built (which may wait on a database): as PID 1 in a container, a process without
  // handlers would ignore SIGTERM. Exit 0 once closed, 1 after an uncaught error or past the grace period.
  const served: { app?: App } = {};
  closeWithGrace({ delay: SHUTDOWN_GRACE_MS, logger: { error: (message: unknown) => logger.error(message) } }, async ({ signal, err }) => {
    if (err !== undefined) logger.fatal({ err }, 'uncaught error; exiting');
    else logger.info({ signal }, 'shutting down');
    if (served.app === undefined) return; // nothing is served yet: nothing to drain
    await served.app.close();
    logger.info('stopped');
  });
  const { app } = await configured(name, () => definition.build({ config, logger }));
  served.app = app;

  app.server.maxConnections = config.maxConnections;
  // Node closes a connection beyond maxConnections as it arrives: logged at most once a second.
  let dropped = 0;
  let loggedAt = 0;
  app.server.on('drop', () => {
    dropped += 1;
    if (Date.now() - loggedAt < 1000) return;
    loggedAt = Date.now();
    logger.warn({ dropped }, `connections closed unanswered: ${config.maxConnections} open already (MAX_CONNECTIONS)`);
    dropped = 0;
  });
  try {
    // The longest accept queue the kernel allows (capped at somaxconn): with Node's default, a flood's burst overflowed it.
    await app.listen({ port: config.port, host: config.host, backlog: 65535 });
  } catch (error) {
    const message = listenErrorMessage(error as NodeJS.ErrnoException, config);
    if (message !== undefined) fail(name, message);
    logger.fatal({ err: error }, 'could not start');
    process.exit(1);
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  // The line's `port` field is how the stack runner, the tests and the bench learn the port.
  logger.info({ port, mode: config.mode }, `${service.startedMessage} ${port}`);
}
