import type { FastifyInstance } from 'fastify';
import { ConfigError, readServiceConfig, type Env, type ServiceConfig, type ServiceDefaults } from './config.js';
import { createLogger, type Logger } from './logger.js';

export interface BuiltService {
  app: FastifyInstance;
}

export interface ServiceDefinition {
  /** Short name, used in logs and as the log file's name. */
  name: string;
  defaults: ServiceDefaults;
  /**
   * Builds the app; may read more of env, wait for a database, and throw ConfigError. The app
   * comes back inside an object, never as a promise's value: a Fastify instance is a thenable,
   * and awaiting it boots it through avvio's then(), after which every request ran about 13%
   * slower (measured on the proxy); listen() boots it without that cost.
   */
  build: (context: { env: Env; config: ServiceConfig; logger: Logger }) => BuiltService | Promise<BuiltService>;
  /** The start-up line, e.g. `Server running on port 3000` (the bound port, also when PORT=0). */
  startedMessage: (port: number) => string;
}

/** How long in-flight requests may take to finish after SIGTERM before we give up. */
const SHUTDOWN_GRACE_MS = 10_000;

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
export async function runService(definition: ServiceDefinition, env: Env = process.env): Promise<void> {
  const { name } = definition;
  let config: ServiceConfig;
  let logger: Logger;
  try {
    config = readServiceConfig(env, definition.defaults);
    logger = createLogger({ name, production: config.production, logDir: config.logDir, level: config.logLevel });
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
  let app: FastifyInstance | undefined;
  let closing = false;
  const shutdown = (signal: NodeJS.Signals): void => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down');
    if (app === undefined) process.exit(0); // nothing is served yet: nothing to drain
    setTimeout(() => {
      logger.error(`requests still running after ${SHUTDOWN_GRACE_MS} ms; exiting anyway`);
      process.exit(1);
    }, SHUTDOWN_GRACE_MS).unref();
    app.close().then(
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

  try {
    ({ app } = await definition.build({ env, config, logger }));
  } catch (error) {
    if (error instanceof ConfigError) fail(name, `invalid configuration: ${error.message}`);
    throw error;
  }

  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    const message = listenErrorMessage(error as NodeJS.ErrnoException, config);
    if (message !== undefined) fail(name, message);
    logger.fatal({ err: error }, 'could not start');
    process.exit(1);
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  logger.info({ port, mode: config.mode }, definition.startedMessage(port));
}
