import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { User, UserStore } from './user-store.js';

/** Users in the first page of a streamed list, and the most per query after it: about 110 kB of JSON. */
export const STREAM_BATCH = 1000;

/**
 * The fewest users per batch: about 11 kB of JSON. A client that reads slower than the database
 * answers holds its last batches (in the socket's buffer, read ahead) until it has read them, so
 * a slow reader's batches are kept small; a batch is at least this, however slow the client.
 */
export const MIN_STREAM_BATCH = 100;

/** About what one user takes in the list's JSON: what a client's pace is reckoned in. */
const BYTES_PER_USER = 128;

/**
 * How long a batch should last the client that reads it: its size is what the client read in that
 * time. Shorter holds less for each slow reader but asks the database more often, taking the pool
 * from the other requests.
 */
const BATCH_READ_MS = 1000;

/** The least a client's pace is measured over: more than a socket's buffers (16 kB in Node, more in the kernel) take at once. */
const PACE_BYTES = 64 * 1024;

/**
 * A list whose first page (full: more may follow) is already read, as JSON text: `[`, the first
 * page, the batches after it, `]`, each page written by `serialize`, the route's serializer of a
 * list. Each batch is one short query (after the last id of the one before), so each is bounded
 * by the store's query timeout (the idle time between batches), and no transaction stays open
 * however slowly the client reads. The next batch is read while this one is being written, and the stream
 * buffers nothing more: it asks for the batch after only when the one before has gone into the
 * socket (backpressure).
 *
 * Each batch is sized to the client: what it read in BATCH_READ_MS at the pace it took the last
 * batch, between MIN_STREAM_BATCH and STREAM_BATCH. A client on a fast network reads the list in
 * the largest batches; one reading at 64 KB/s holds three of about 500 users (one in the socket's
 * buffer, one waiting for it, one read ahead) instead of three of the largest, however many such
 * clients there are.
 *
 * When a batch fails the stream fails before `]`, and the response is cut, never a shorter valid
 * array, and onCut is told why. A client that goes away stops the reading.
 */
export function streamList(
  store: UserStore,
  first: User[],
  serialize: (users: User[]) => string,
  onCut: (error: unknown, lastId: number | undefined) => void,
): Readable {
  async function* chunks(): AsyncGenerator<string> {
    let lastId = first.at(-1)?.id;
    // Small until the client's pace is known (it is after the first page): many slow readers each
    // holding large batches would hold much of the heap.
    let size = MIN_STREAM_BATCH;
    // A serialized list is `[...]`: its brackets go, and the pages' items are joined by commas.
    let chunk = serialize(first).slice(0, -1);
    // The client's pace: bytes it read while the stream waited for it, and how long it waited.
    let paceBytes = 0;
    let paceMs = 0;
    let before = 0; // the length of the chunk yielded before this one
    for (;;) {
      const asked = size;
      const next = lastId === undefined ? undefined : store.page(lastId, asked);
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
        size = Math.min(STREAM_BATCH, Math.max(MIN_STREAM_BATCH, Math.floor(usersPerBatch)));
        paceBytes = paceMs = 0;
      }
      before = chunk.length;
      let batch: User[];
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
      if (batch.length === 0) break; // the last batch was just full, or the users after lastId were deleted meanwhile
      chunk = `,${serialize(batch).slice(1, -1)}`;
      // A batch short of its size was the last.
      lastId = batch.length === asked ? batch.at(-1)?.id : undefined;
    }
    yield ']';
  }
  // A buffer of one byte: the generator runs only when the socket has taken what it yielded last.
  return Readable.from(chunks(), { objectMode: false, highWaterMark: 1 });
}
