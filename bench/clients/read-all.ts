/**
 * The reader of the size scenario, run as its own process (pinned away from the server under
 * test): reads a whole answer, an HTTP GET or a command's standard output, `repeat` times, and
 * describes each reading without keeping it: time to the first byte and to the last, bytes,
 * the count of `{"id":` (one per user object), the first and last bytes, and, for answers no
 * longer than `parseUpTo` bytes, the length of the array JSON.parse makes of it.
 *
 * Usage: node bench/dist/clients/read-all.js '<ReadSpec as JSON>'; prints one JSON line, ReadResult.
 */
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { performance } from 'node:perf_hooks';

export interface ReadSpec {
  /** An http: URL to GET, on a new connection each time... */
  url?: string;
  /** ...or a command whose standard output is the answer (status: its exit code). */
  command?: string[];
  repeat: number;
  /** Answers up to this many bytes are also parsed as a JSON array (the rest only counted). */
  parseUpTo: number;
}

export interface Reading {
  /** HTTP status, or the command's exit code; 0 when the request itself failed. */
  status: number;
  ttfbMs: number;
  totalMs: number;
  bytes: number;
  /** Occurrences of `{"id":`, counted across chunk boundaries. */
  rows: number;
  head: string;
  tail: string;
  /** JSON.parse of the whole answer: the array's length, `invalid` (not JSON, or not an array), or `not checked` (too long). */
  json: number | 'invalid' | 'not checked';
  error?: string;
}

export interface ReadResult {
  readings: Reading[];
}

const marker = Buffer.from('{"id":');
const edgeBytes = 64;

function occurrences(buffer: Buffer): number {
  let count = 0;
  for (let at = buffer.indexOf(marker); at !== -1; at = buffer.indexOf(marker, at + marker.length)) count++;
  return count;
}

/** Counts an answer chunk by chunk, keeping only its edges (and, while small, its chunks for parsing). */
class Counter {
  bytes = 0;
  rows = 0;
  private head = Buffer.alloc(0);
  private tail = Buffer.alloc(0);
  private chunks: Buffer[] | undefined = [];

  constructor(private readonly parseUpTo: number) {}

  add(chunk: Buffer): void {
    // A marker split between two chunks: its start in the last bytes so far, its end in this chunk.
    if (this.tail.length > 0) {
      this.rows += occurrences(Buffer.concat([this.tail.subarray(-(marker.length - 1)), chunk.subarray(0, marker.length - 1)]));
    }
    this.rows += occurrences(chunk);
    if (this.head.length < edgeBytes) this.head = Buffer.concat([this.head, chunk.subarray(0, edgeBytes - this.head.length)]);
    this.tail = Buffer.concat([this.tail, chunk.subarray(-edgeBytes)]).subarray(-edgeBytes);
    this.bytes += chunk.length;
    if (this.bytes > this.parseUpTo) this.chunks = undefined;
    else this.chunks?.push(chunk);
  }

  reading(status: number, ttfbMs: number, totalMs: number, error?: string): Reading {
    let json: Reading['json'] = 'not checked';
    if (this.chunks !== undefined) {
      try {
        const value: unknown = JSON.parse(Buffer.concat(this.chunks).toString('utf8'));
        json = Array.isArray(value) ? value.length : 'invalid';
      } catch {
        json = 'invalid';
      }
    }
    this.chunks = undefined;
    const text = (buffer: Buffer): string => buffer.toString('utf8');
    return { status, ttfbMs, totalMs, bytes: this.bytes, rows: this.rows, head: text(this.head), tail: text(this.tail), json, error };
  }
}

function readUrl(url: string, parseUpTo: number): Promise<Reading> {
  return new Promise((resolve) => {
    const counter = new Counter(parseUpTo);
    const started = performance.now();
    let ttfbMs = Number.NaN;
    const req = request(url, { agent: false, headers: { accept: 'application/json' } }, (res) => {
      ttfbMs = performance.now() - started;
      let ended = false;
      res.on('data', (chunk: Buffer) => counter.add(chunk));
      res.on('end', () => {
        ended = true;
        resolve(counter.reading(res.statusCode ?? 0, ttfbMs, performance.now() - started));
      });
      // A response cut before its end (a failed stream) closes without 'end'.
      res.on('close', () => {
        if (!ended) resolve(counter.reading(res.statusCode ?? 0, ttfbMs, performance.now() - started, 'the response was cut'));
      });
      res.on('error', () => undefined);
    });
    req.on('error', (error) => resolve(counter.reading(0, ttfbMs, performance.now() - started, error.message)));
    req.end();
  });
}

function readCommand(command: string[], parseUpTo: number): Promise<Reading> {
  return new Promise((resolve) => {
    const counter = new Counter(parseUpTo);
    const started = performance.now();
    let ttfbMs = Number.NaN;
    let totalMs = Number.NaN;
    let stderr = '';
    const child = spawn(command[0] ?? '', command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk: Buffer) => {
      if (counter.bytes === 0) ttfbMs = performance.now() - started;
      counter.add(chunk);
    });
    child.stdout.on('end', () => (totalMs = performance.now() - started));
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(0, 2000)));
    child.on('error', (error) => resolve(counter.reading(-1, ttfbMs, performance.now() - started, error.message)));
    child.on('close', (code) => resolve(counter.reading(code ?? -1, ttfbMs, totalMs, code === 0 ? undefined : stderr || `exit ${code}`)));
  });
}

const spec = JSON.parse(process.argv[2] ?? '{}') as ReadSpec;
const readings: Reading[] = [];
for (let i = 0; i < spec.repeat; i++) {
  if (spec.url !== undefined) readings.push(await readUrl(spec.url, spec.parseUpTo));
  else if (spec.command !== undefined) readings.push(await readCommand(spec.command, spec.parseUpTo));
  else throw new Error('read-all: give a url or a command');
}
process.stdout.write(`${JSON.stringify({ readings } satisfies ReadResult)}\n`);
