import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { emailKey } from '@sample-services/users-api/email-key';
import type { WriterData, WriterError, WriterReply, WriterRequest } from './sqlite-protocol.js';
import { DatabaseUnavailableError, DuplicateEmailError, type NewUser, type User } from './user-store.js';
import { withTimeout } from './with-timeout.js';

// Built, this module and the writer are siblings in dist; under Vitest this module is the .ts
// source, and Node runs the writer's source too, stripping its types.
const writerUrl = new URL(import.meta.url.endsWith('.ts') ? './sqlite-writer.ts' : './sqlite-writer.js', import.meta.url);

// Codes meaning "the file is busy, unreadable or full", worth a retry rather than a bug report.
const unavailableCodes = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY|NOMEM)/;

/** The error of a SQLite call: unavailable (503) for the codes above, otherwise as it came (500). */
export function classifySqlite(error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && unavailableCodes.test(code) ? new DatabaseUnavailableError(error) : error;
}

/** An error the writer reported, rebuilt on this side with its code. */
const rebuilt = (error: WriterError): unknown => classifySqlite(Object.assign(new Error(error.message), { code: error.code }));

interface Call {
  resolve: (reply: WriterReply) => void;
  reject: (error: unknown) => void;
}

/** A request before its id is given (distributed over the union's members). */
type Request<R = WriterRequest> = R extends WriterRequest ? Omit<R, 'id'> : never;

/**
 * The main thread's side of a SQLite store's writer thread. The thread is started on first use and
 * again after it died: calls in flight when it dies fail as unavailable, none is left waiting.
 * It holds the process open only while calls are in flight.
 */
export class SqliteWriterThread {
  private worker: Worker | undefined;
  private readonly calls = new Map<number, Call>();
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly file: string,
    private readonly onStart?: (worker: Worker) => void,
  ) {}

  /** One outcome per user, in order; rejects (unavailable, or the error of a failed COMMIT) to fail them all. */
  async write(users: NewUser[]): Promise<PromiseSettledResult<User>[]> {
    const reply = await this.call({ kind: 'write', users: users.map((user) => ({ ...user, emailKey: emailKey(user.email) })) });
    if (reply.kind === 'failed') throw rebuilt(reply.error);
    if (reply.kind !== 'written' || reply.rows.length !== users.length)
      throw new Error(`the SQLite writer answered ${reply.kind} to a write`);
    return reply.rows.map((row, i) => {
      if ('user' in row) return { status: 'fulfilled', value: row.user };
      const reason = 'duplicate' in row ? new DuplicateEmailError(users[i]!.email) : rebuilt(row.error);
      return { status: 'rejected', reason };
    });
  }

  /** Whether the writer answers `SELECT 1` on its connection within timeoutMs (a dead one is started again first). */
  async ping(timeoutMs: number): Promise<boolean> {
    try {
      const reply = await withTimeout(this.call({ kind: 'ping' }), timeoutMs, 'the SQLite writer');
      return reply.kind === 'pong' && reply.ok;
    } catch {
      return false;
    }
  }

  /** Closes the write connection and ends the thread; the caller has let the writes in flight finish. */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    if (worker === undefined) return;
    const exited = once(worker, 'exit');
    worker.ref();
    worker.postMessage({ kind: 'close', id: 0 } satisfies WriterRequest);
    await exited;
  }

  private call(request: Request): Promise<WriterReply> {
    if (this.closed) return Promise.reject(new DatabaseUnavailableError(new Error('the store is closed')));
    const worker = this.started();
    const id = this.nextId++;
    return new Promise<WriterReply>((resolve, reject) => {
      this.calls.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ ...request, id });
    });
  }

  /** Starts the thread unless it runs. */
  started(): Worker {
    if (this.worker !== undefined) return this.worker;
    const worker = new Worker(writerUrl, { workerData: { file: this.file } satisfies WriterData });
    this.worker = worker;
    worker.unref();
    let failure: Error | undefined;
    worker.on('message', (reply: WriterReply) => {
      const call = this.calls.get(reply.id);
      this.calls.delete(reply.id);
      call?.resolve(reply);
      // Held while closing too: close() waits for the thread's exit.
      if (this.calls.size === 0 && !this.closed) worker.unref();
    });
    worker.on('error', (error) => (failure = error));
    worker.on('exit', (code) => {
      this.worker = undefined;
      const why = failure === undefined ? `exit code ${code}` : failure.message;
      const error = new DatabaseUnavailableError(new Error(`the SQLite writer thread stopped (${why})`, { cause: failure }));
      for (const call of this.calls.values()) call.reject(error);
      this.calls.clear();
    });
    this.onStart?.(worker);
    return worker;
  }
}
