import { closeSync, fstatSync, mkdirSync, openSync, renameSync, statSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pino, type Logger, type DestinationStream } from 'pino';
import type PinoPretty from 'pino-pretty';
import { ConfigError, type LogFormat } from './config.js';

export type { Logger };

/** pino-pretty, an optional peer only development installs (the images log JSON); undefined where it is not installed. */
function loadPretty(): typeof PinoPretty | undefined {
  const require = createRequire(import.meta.url);
  try {
    return require('pino-pretty') as typeof PinoPretty;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') return undefined;
    throw error;
  }
}

export interface LoggerOptions {
  /** Service name, also the log file's name: `<logDir>/<name>.log`. */
  name: string;
  /** JSON lines in production; see `format`. */
  production: boolean;
  /** `auto` (default): readable lines in development at a terminal, else JSON for whatever reads the output. */
  format?: LogFormat;
  logDir?: string | undefined;
  /** Size at which the file in logDir is rotated (openCappedFile); LOG_FILE_MAX_BYTES when unset. */
  logFileMaxBytes?: number;
  level?: string;
}

/** The size at which a service's log file in LOG_DIR is rotated: the same as the compose files' max-size. */
const LOG_FILE_MAX_BYTES = 10 * 1024 * 1024;

/**
 * Appends lines to `path`, renamed `<path>.1` once it reaches maxBytes, so that replicas sharing a
 * volume keep one bounded file. Hand-written: pino-roll writes numbered files and rolls on its own writes alone.
 */
export function openCappedFile(path: string, maxBytes: number): DestinationStream {
  let fd = openSync(path, 'a');
  let size = fstatSync(fd).size;
  const rotate = (): void => {
    // Another replica may have renamed it already (a new inode, or none yet): then its new file is ours too.
    if (statSync(path, { throwIfNoEntry: false })?.ino === fstatSync(fd).ino) {
      try {
        renameSync(path, `${path}.1`);
      } catch {
        // Renamed by another process in the meantime: its new file is ours too.
      }
    }
    closeSync(fd);
    fd = openSync(path, 'a');
    size = fstatSync(fd).size;
  };
  return {
    write(line: string) {
      writeSync(fd, line);
      size += Buffer.byteLength(line);
      if (size >= maxBytes) rotate();
    },
  };
}

/**
 * A pino logger writing to stdout and, with logDir, the same JSON lines to a capped file there. Streams are
 * synchronous in the main thread: no worker to flush on exit, and the log survives a crash up to its last line.
 */
export function createLogger(options: LoggerOptions): Logger {
  const format = options.format ?? 'auto';
  const wanted = format === 'pretty' || (format === 'auto' && !options.production && process.stdout.isTTY);
  // `auto` falls back to JSON where pino-pretty is not installed; asking for `pretty` there is an error.
  const pretty = wanted ? loadPretty() : undefined;
  if (format === 'pretty' && pretty === undefined) {
    throw new ConfigError('LOG_FORMAT=pretty needs pino-pretty, a development dependency not installed here; use LOG_FORMAT=json or auto');
  }
  // Streams take every line (trace): the logger's own level is the one filter.
  const streams: { level: 'trace'; stream: DestinationStream }[] = [
    {
      level: 'trace',
      stream: pretty
        ? pretty({ colorize: process.stdout.isTTY, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', sync: true })
        : pino.destination({ dest: 1, sync: true }),
    },
  ];
  if (options.logDir !== undefined) {
    mkdirSync(options.logDir, { recursive: true });
    const path = join(options.logDir, `${options.name}.log`);
    streams.push({ level: 'trace', stream: openCappedFile(path, options.logFileMaxBytes ?? LOG_FILE_MAX_BYTES) });
  }
  return pino({ name: options.name, level: options.level ?? 'info', base: { pid: process.pid } }, pino.multistream(streams));
}
