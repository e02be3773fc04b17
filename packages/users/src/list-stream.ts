import { Readable } from 'node:stream';
import type { UserBatch, UserPage, UserStore } from './user.js';

/**
 * Users in the first page of a streamed list, and per query after it on a store without batch()
 * (SQLite): about 110 kB of JSON, so the process holds a few hundred kB of a list of any length
 * (this batch, the next one being read, the socket's buffer). Larger
 * batches page faster on PostgreSQL (300,000 users: 1.0-1.9 s in batches of 5,000, 2.7-3.5 s in
 * batches of 1,000), but peak RSS rose (a million users with a 64 MB heap: 129 to 144 MB), probably
 * because a text over V8's 128 kB regular-object size goes to the large-object space (not verified);
 * PostgreSQL's batch() reads larger batches as bytes instead (copy-batch.ts).
 */
export const STREAM_BATCH = 1000;

/**
 * The rest of a list whose first page is already read, as JSON text: `[`, the first page, the
 * batches after it, `]`. Each batch is one short query (after the last id of the one before;
 * store.batch when the store has it, otherwise a page of STREAM_BATCH), so each is bounded by
 * the store's query timeout (the idle time between batches), and no transaction stays open
 * however slowly the client reads. The next batch is read while this one is being written; the
 * stream waits for the client before asking for the one after (backpressure). When a batch
 * fails the stream fails before `]`, and the response is cut, never a shorter valid array, and
 * onCut is told why. A client that goes away stops the reading.
 */
export function streamList(store: UserStore, first: UserPage, onCut: (error: unknown, lastId: number | undefined) => void): Readable {
  const read = (after: number): Promise<UserBatch> =>
    store.batch?.(after) ?? store.page(after, STREAM_BATCH).then((page) => ({ ...page, body: page.json === '' ? '' : `,${page.json}` }));
  async function* chunks(): AsyncGenerator<string | Buffer> {
    let { lastId, more } = first;
    let chunk: string | Buffer = `[${first.json}`;
    for (;;) {
      const next = more && lastId !== undefined ? read(lastId) : undefined;
      // Awaited below; when the client has gone by then, its failure must not go unhandled.
      next?.catch(() => undefined);
      yield chunk;
      if (next === undefined) break;
      let batch: UserBatch;
      try {
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
  return Readable.from(chunks(), { objectMode: false, highWaterMark: 64 * 1024 });
}
