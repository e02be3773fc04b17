/**
 * The writer thread of a SQLite store: it owns the file's write connection, so the sync of each
 * commit (synchronous=FULL) and the WAL checkpoints that commits trigger block this thread, never
 * the event loop serving requests. Each batch of creates is one transaction and one sync; its
 * answer is posted only after COMMIT returned, that is after the sync.
 */
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { User } from './user-store.js';
import type { KeyedUser, RowOutcome, WriterData, WriterError, WriterReply, WriterRequest } from './sqlite-protocol.js';

const port = parentPort;
if (port === null) throw new Error('sqlite-writer.js runs as a worker thread of a SQLite store');

const { file } = workerData as WriterData;
const db = new Database(file);
db.pragma('journal_mode = WAL');
db.pragma('busy_timeout = 2000');
// FULL: COMMIT returns once the WAL is synced, so every answer posted below is for durable rows.
db.pragma('synchronous = FULL');

// Any unique index decides that the e-mail is taken: since 0002, the one on email_key.
const insert = db.prepare<[string, string, string], User>(
  'INSERT INTO users (name, email, email_key) VALUES (?, ?, ?) ON CONFLICT DO NOTHING RETURNING id, name, email, created_at',
);
const probe = db.prepare<[], number>('SELECT 1').pluck();

const asWriterError = (error: unknown): WriterError => {
  const code = (error as { code?: unknown }).code;
  return { message: error instanceof Error ? error.message : String(error), code: typeof code === 'string' ? code : undefined };
};

// A failing row (a CHECK) is that row's failure only; an error after which SQLite rolled the
// transaction back (a full disk, an I/O error) fails the batch, as does a failed COMMIT.
const writeBatch = db.transaction((users: KeyedUser[]): RowOutcome[] =>
  users.map((user) => {
    try {
      const stored = insert.get(user.name, user.email, user.emailKey);
      return stored === undefined ? { duplicate: true } : { user: stored };
    } catch (error) {
      if (!db.inTransaction) throw error;
      return { error: asWriterError(error) };
    }
  }),
);

const reply = (message: WriterReply): void => port.postMessage(message);

port.on('message', (request: WriterRequest) => {
  switch (request.kind) {
    case 'write':
      try {
        reply({ kind: 'written', id: request.id, rows: writeBatch.immediate(request.users) });
      } catch (error) {
        reply({ kind: 'failed', id: request.id, error: asWriterError(error) });
      }
      break;
    case 'ping':
      try {
        reply({ kind: 'pong', id: request.id, ok: probe.get() === 1 });
      } catch {
        reply({ kind: 'pong', id: request.id, ok: false });
      }
      break;
    case 'close':
      // The last connection to close checkpoints the WAL into the file; then the thread ends.
      db.close();
      reply({ kind: 'closed', id: request.id });
      port.close();
      break;
  }
});
