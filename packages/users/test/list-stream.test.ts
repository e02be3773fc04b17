import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { MAX_STREAM_BATCH, MIN_STREAM_BATCH, STREAM_BATCH, streamList } from '../src/list-stream.js';
import type { UserBatch, UserPage, UserStore } from '../src/user-store.js';

const userJson = (id: number): string =>
  JSON.stringify({ id, name: `User ${id}`, email: `user-${id}@example.com`, created_at: '2026-01-01T00:00:00.000Z' });

/** A store of `total` users whose batches are made up on the spot; it records the size of each batch asked for. */
function madeUpStore(total: number, withBatch: boolean): { store: UserStore; asked: number[] } {
  const asked: number[] = [];
  const users = (after: number, limit: number): number[] =>
    Array.from({ length: Math.max(0, Math.min(limit, total - after)) }, (_, i) => after + i + 1);
  const page = async (after: number, limit: number): Promise<UserPage> => {
    const ids = users(after, limit);
    return { json: ids.map(userJson).join(','), lastId: ids.at(-1), more: (ids.at(-1) ?? total) < total };
  };
  const batch = async (after: number, limit: number): Promise<UserBatch> => {
    asked.push(limit);
    const ids = users(after, limit);
    return { body: Buffer.from(ids.map((id) => `,${userJson(id)}`).join('')), lastId: ids.at(-1), more: ids.length === limit };
  };
  const unused = (): never => {
    throw new Error('not used by the stream');
  };
  const store: UserStore = {
    init: async () => undefined,
    page: async (after, limit) => {
      if (after > 0) asked.push(limit);
      return page(after, limit);
    },
    ...(withBatch ? { batch } : {}),
    create: unused,
    ping: async () => true,
    close: async () => undefined,
  };
  return { store, asked };
}

/** Reads the stream at `bytesPerSecond` (Infinity: as fast as it comes), through a 16 kB buffer like a socket's; returns the text. */
async function readAt(stream: NodeJS.ReadableStream, bytesPerSecond: number): Promise<string> {
  const chunks: Buffer[] = [];
  await pipeline(
    stream,
    new Writable({
      highWaterMark: 16 * 1024,
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk);
        if (bytesPerSecond === Infinity) done();
        else setTimeout(done, (1000 * chunk.length) / bytesPerSecond);
      },
    }),
  );
  return Buffer.concat(chunks).toString();
}

async function listed(total: number, withBatch: boolean, bytesPerSecond: number, firstPage = STREAM_BATCH): Promise<number[]> {
  const { store, asked } = madeUpStore(total, withBatch);
  const first = await store.page(0, firstPage);
  const text = await readAt(
    streamList(store, first, (error) => {
      throw error;
    }),
    bytesPerSecond,
  );
  expect((JSON.parse(text) as { id: number }[]).map((user) => user.id)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
  return asked;
}

describe('a streamed list sizes its batches to the client', () => {
  it('reads the largest batches of the store for a client that keeps up', async () => {
    const asked = await listed(30_000, true, Infinity);
    // The first two before the client's pace is known (after the first page), then the largest.
    expect(asked, `batch sizes ${asked.join(' ')}`).toEqual([
      MIN_STREAM_BATCH,
      MIN_STREAM_BATCH,
      ...asked.slice(2).map(() => MAX_STREAM_BATCH),
    ]);
    expect(asked.length).toBeGreaterThan(5);
  });

  it('reads batches of what a client slower than the database reads in a second', async () => {
    // 50 kB/s: about 400 users in the second a batch should last; the first page is 700 users (75 kB).
    const asked = await listed(1_700, true, 50_000, 700);
    expect(asked.slice(0, 2)).toEqual([MIN_STREAM_BATCH, MIN_STREAM_BATCH]);
    const paced = asked.slice(2);
    expect(paced.length, `batch sizes ${asked.join(' ')}`).toBeGreaterThan(1);
    for (const size of paced) expect(size, `batch sizes ${asked.join(' ')}`).toBeGreaterThan(MIN_STREAM_BATCH);
    for (const size of paced) expect(size, `batch sizes ${asked.join(' ')}`).toBeLessThan(STREAM_BATCH);
  });

  it('reads pages of at most STREAM_BATCH from a store without batch()', async () => {
    const asked = await listed(10_000, false, Infinity);
    expect(Math.max(...asked)).toBe(STREAM_BATCH);
  });
});
