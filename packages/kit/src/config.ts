/**
 * Configuration from the environment, checked once at start-up.
 * Every reader throws a ConfigError whose message names the variable and what is wrong,
 * so the entry point can print one line and exit 1 instead of failing later.
 */
export type Env = Readonly<Record<string, string | undefined>>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** The value, or undefined when the variable is unset or blank. */
function raw(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

export function readString(env: Env, name: string, fallback: string): string {
  return raw(env, name) ?? fallback;
}

export function readChoice(env: Env, name: string, fallback: string, choices: readonly string[]): string {
  const value = raw(env, name) ?? fallback;
  if (!choices.includes(value)) throw new ConfigError(`${name} must be one of ${choices.join(', ')}, got "${value}"`);
  return value;
}

export function readInt(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${value}"`);
  }
  return n;
}

export function readPort(env: Env, name: string, fallback: number): number {
  return readInt(env, name, fallback, 0, 65535);
}

export function readUrl(env: Env, name: string, fallback: string, protocols: readonly string[]): URL {
  const value = raw(env, name) ?? fallback;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${name} must be a URL, got "${value}"`);
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(`${name} must start with ${protocols.map((p) => `${p}//`).join(' or ')}, got "${url.protocol}//..."`);
  }
  return url;
}

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
}

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export interface ServiceDefaults {
  port: number;
  /** Variables read for the run mode, first set wins; default ['NODE_ENV']. */
  modeVariables?: readonly string[];
}

export function readServiceConfig(env: Env, defaults: ServiceDefaults): ServiceConfig {
  const modeVariables = defaults.modeVariables ?? ['NODE_ENV'];
  const mode = modeVariables.map((name) => raw(env, name)).find((v) => v !== undefined) ?? 'development';
  return {
    port: readPort(env, 'PORT', defaults.port),
    host: readString(env, 'HOST', '0.0.0.0'),
    mode,
    production: mode === 'production',
    logDir: raw(env, 'LOG_DIR'),
    logLevel: readChoice(env, 'LOG_LEVEL', 'info', logLevels),
  };
}
