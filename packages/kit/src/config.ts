/**
 * Configuration from the environment, checked once at start-up: every reader throws a ConfigError
 * naming the variable and what is wrong, which the entry point prints as one line before exiting 1.
 */
export type Env = Readonly<Record<string, string | undefined>>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** The value, or undefined when the variable is unset or blank. */
function raw(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === '' ? undefined : value;
}

export function readString(env: Env, name: string, fallback: string): string {
  return raw(env, name) ?? fallback;
}

export function readChoice<Choice extends string>(env: Env, name: string, fallback: Choice, choices: readonly Choice[]): Choice {
  const value = raw(env, name) ?? fallback;
  if (!choices.includes(value as Choice)) throw new ConfigError(`${name} must be one of ${choices.join(', ')}, got "${value}"`);
  return value as Choice;
}

export function readInt(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max)
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${value}"`);
  return n;
}

export function readPort(env: Env, name: string, fallback: number): number {
  return readInt(env, name, fallback, 0, 65535);
}

function parseUrl(name: string, value: string, protocols: readonly string[]): URL {
  // A URL may carry a password before its '@' (DATABASE_URL): never quote that part.
  const shown = value.includes('@') ? `...${value.slice(value.lastIndexOf('@'))}` : value;
  const url = URL.parse(value);
  if (url === null) throw new ConfigError(`${name} must be a URL, got "${shown}"`);
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(`${name} must start with ${protocols.map((p) => `${p}//`).join(' or ')}, got "${url.protocol}//..."`);
  }
  return url;
}

export function readUrl(env: Env, name: string, fallback: string, protocols: readonly string[]): URL {
  return parseUrl(name, raw(env, name) ?? fallback, protocols);
}

/** The URL, or undefined when the variable is unset or blank. */
export function readOptionalUrl(env: Env, name: string, protocols: readonly string[]): URL | undefined {
  const value = raw(env, name);
  return value === undefined ? undefined : parseUrl(name, value, protocols);
}

export type LogFormat = 'auto' | 'json' | 'pretty';

/** What every service reads: where to listen, the run mode and where logs go. */
export interface ServiceConfig {
  port: number;
  host: string;
  /** Run mode: NODE_ENV, or for the database services FLASK_ENV first (spec 4.5). */
  mode: string;
  production: boolean;
  /** Directory that also receives the log, when set (the images set /app/logs). */
  logDir: string | undefined;
  /** pino level; at debug or trace every request is logged too. */
  logLevel: string;
  /** `auto`: readable lines for a person at a terminal in development, JSON lines otherwise. */
  logFormat: LogFormat;
  /** Most client connections open at once (Node's `maxConnections`): one more is closed as it arrives. */
  maxConnections: number;
}

/** What the kit needs to know of a service: its own src/service.ts, which the manifest lists. */
export interface ServiceIdentity {
  /** Short name, in logs and as the log file's name. */
  readonly name: string;
  /** One line on what it does (README table, OpenAPI description). */
  readonly summary: string;
  /** Default listening port. */
  readonly port: number;
  /** Variables read for the run mode, first set wins. */
  readonly modeVariables: readonly string[];
  /** The start-up line's text before the port, e.g. `Server running on port`. */
  readonly startedMessage: string;
}

/** The variables every service reads (PORT, HOST, the run mode, LOG_DIR, LOG_LEVEL, LOG_FORMAT, MAX_CONNECTIONS). */
export function readServiceConfig(env: Env, service: Pick<ServiceIdentity, 'port' | 'modeVariables'>): ServiceConfig {
  const mode = service.modeVariables.map((name) => raw(env, name)).find((v) => v !== undefined) ?? 'development';
  return {
    port: readPort(env, 'PORT', service.port),
    host: readString(env, 'HOST', '0.0.0.0'),
    mode,
    production: mode === 'production',
    logDir: raw(env, 'LOG_DIR'),
    logLevel: readChoice(env, 'LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    logFormat: readChoice<LogFormat>(env, 'LOG_FORMAT', 'auto', ['auto', 'json', 'pretty']),
    // A bound on what a flood of connections can cost in memory (docs/floods.md).
    maxConnections: readInt(env, 'MAX_CONNECTIONS', 10_000, 1, 1_000_000),
  };
}
