export {
  ConfigError,
  readChoice,
  readInt,
  readOptionalString,
  readOptionalUrl,
  readPort,
  readServiceConfig,
  readString,
  readUrl,
} from './config.js';
export type { Env, ServiceConfig, ServiceIdentity } from './config.js';
export { HttpError } from './errors.js';
export { createLogger } from './logger.js';
export type { Logger, LoggerOptions } from './logger.js';
export { errorSchema } from './schemas.js';
export { createServer } from './server.js';
export type { ServerOptions } from './server.js';
export { runService } from './run.js';
export type { BuiltService, ServiceDefinition } from './run.js';
