import { Readable } from 'node:stream';
import type { UserPage, UserStore } from './user.js';

/**
 * Users per query of a streamed list: about 110 kB of JSON, so the process holds a few hundred
 * kB of a list of any length (this batch, the next one being read, the socket's buffer). Larger
 * batches page faster on PostgreSQL (300,000 users: 1.0-1.9 s in batches of 5,000, 2.7-3.5 s in
 * batches of 1,000), but peak RSS rose (a million users with a 64 MB heap: 129 to 144 MB), probably
 * because a text over V8's 128 kB regular-object size goes to the large-object space (not verified).
 */
export const STREAM_BATCH = 1000;

/**
 * The rest of a list whose first page is already read, as JSON text: `[`, the pages joined by
 * commas, `]`. Each page is one short query (after the last id of the one before), so each is
 * bounded by the store's query timeout (the idle time between batches), and no transaction
 * stays open however slowly the client reads. The next page is read while this one is being
 * written; the stream waits for the client before asking for the one after (backpressure).
 * When a page fails the stream fails before `]`, and the response is cut, never a shorter
 * valid array, and onCut is told why. A client that goes away stops the reading.
 */
export function streamList(store: UserStore, first: UserPage, onCut: (error: unknown, lastId: number | undefined) => void): Readable {
  async function* pages(): AsyncGenerator<string> {
    let page = first;
    let text = `[${page.json}`;
    for (;;) {
      const next = page.more && page.lastId !== undefined ? store.page(page.lastId, STREAM_BATCH) : undefined;
      // Awaited below; when the client has gone by then, its failure must not go unhandled.
      next?.catch(() => undefined);
      yield text;
      if (next === undefined) break;
      try {
        page = await next;
      } catch (error) {
        // Fastify cuts the response on a stream error but logs it only with request logging on.
        onCut(error, page.lastId);
        throw error;
      }
      if (page.json === '') break; // possible only if the users after lastId were deleted meanwhile
      text = `,${page.json}`;
    }
    yield ']';
  }
  return Readable.from(pages(), { objectMode: false, highWaterMark: 64 * 1024 });
}
