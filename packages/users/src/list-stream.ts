import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { BYTES_PER_USER, type UserBatch, type UserPage, type UserStore } from './user-store.js';

/**
 * Users in the first page of a streamed list, and the most per query after it on a store without
 * batch() (SQLite): about 110 kB of JSON. Larger pages page faster but hold more memory as V8
 * strings; PostgreSQL's batch() reads its larger batches as bytes instead (copy-batch.ts).
 */
export const STREAM_BATCH = 1000;

/** The most users per batch from a store's batch() (PostgreSQL's COPY, read as bytes): fewer round trips for a fast reader. */
export const MAX_STREAM_BATCH = 5000;

/**
 * The fewest users per batch: about 11 kB of JSON. A client that reads slower than the database
 * answers holds its last batches (in the socket's buffer, read ahead) until it has read them, so
 * a slow reader's batches are kept small; a batch is at least this, however slow the client.
 */
export const MIN_STREAM_BATCH = 100;

/**
 * How long a batch should last the client that reads it: its size is what the client read in that
 * time. Shorter holds less for each slow reader but asks the database more often, taking the pool
 * from the other requests.
 */
const BATCH_READ_MS = 1000;

/** The least a client's pace is measured over: more than a socket's buffers (16 kB in Node, more in the kernel) take at once. */
const PACE_BYTES = 64 * 1024;

/**
 * The rest of a list whose first page is already read, as JSON text: `[`, the first page, the
 * batches after it, `]`. Each batch is one short query (after the last id of the one before;
 * store.batch when the store has it, otherwise store.page), so each is bounded by the store's
 * query timeout (the idle time between batches), and no transaction stays open however slowly
 * the client reads. The next batch is read while this one is being written, and the stream
 * buffers nothing more: it asks for the batch after only when the one before has gone into the
 * socket (backpressure).
 *
 * Each batch is sized to the client: what it read in BATCH_READ_MS at the pace it took the last
 * batch, between MIN_STREAM_BATCH and the store's largest. A client on a fast network reads the
 * list in the largest batches; one reading at 64 KB/s holds three of about 500 users (one in the
 * socket's buffer, one waiting for it, one read ahead: about 200 kB) instead of three of the
 * largest (1.6 MB), however many such clients there are.
 *
 * When a batch fails the stream fails before `]`, and the response is cut, never a shorter valid
 * array, and onCut is told why. A client that goes away stops the reading.
 */
export function streamList(store: UserStore, first: UserPage, onCut: (error: unknown, lastId: number | undefined) => void): Readable {
  const largest = store.batch === undefined ? STREAM_BATCH : MAX_STREAM_BATCH;
  const read = (after: number, size: number): Promise<UserBatch> =>
    store.batch?.(after, size) ?? store.page(after, size).then((page) => ({ ...page, body: page.json === '' ? '' : `,${page.json}` }));
  async function* chunks(): AsyncGenerator<string | Buffer> {
    let { lastId, more } = first;
    // Small until the client's pace is known (it is after the first page): many slow readers each
    // holding large batches would hold much of the heap.
    let size = MIN_STREAM_BATCH;
    let chunk: string | Buffer = `[${first.json}`;
    // The client's pace: bytes it read while the stream waited for it, and how long it waited.
    let paceBytes = 0;
    let paceMs = 0;
    let before = 0; // the length of the chunk yielded before this one
    for (;;) {
      const next = more && lastId !== undefined ? read(lastId, size) : undefined;
      // Awaited below; when the client has gone by then, its failure must not go unhandled.
      next?.catch(() => undefined);
      const yieldedAt = performance.now();
      yield chunk;
      if (next === undefined) break;
      // Resumed once the client has read the chunk before this one (the socket's buffer drained and
      // took this one). Only the waiting counts, not the queries: a slow database must not look like
      // a slow client. A pace is taken over PACE_BYTES at least: less fits in the socket's buffers.
      paceBytes += before;
      paceMs += performance.now() - yieldedAt;
      if (paceBytes >= PACE_BYTES) {
        const usersPerBatch = (paceBytes / Math.max(paceMs, 1)) * (BATCH_READ_MS / BYTES_PER_USER);
        size = Math.min(largest, Math.max(MIN_STREAM_BATCH, Math.floor(usersPerBatch)));
        paceBytes = paceMs = 0;
      }
      before = chunk.length;
      let batch: UserBatch;
      try {
        // A turn of the event loop per batch: a synchronous store (SQLite) answers in microtasks, and a
        // client reading fast would otherwise hold the loop for the whole list, other requests and timers waiting.
        await nextTurn();
        batch = await next;
      } catch (error) {
        // Fastify cuts the response on a stream error but logs it only with request logging on.
        onCut(error, lastId);
        throw error;
      }
      if (batch.body.length === 0) break; // the users after lastId were deleted meanwhile, or the last batch was just full
      ({ lastId, more, body: chunk } = batch);
    }
    yield ']';
  }
  // A buffer of one byte: the generator runs only when the socket has taken what it yielded last.
  return Readable.from(chunks(), { objectMode: false, highWaterMark: 1 });
}
