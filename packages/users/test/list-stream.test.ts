import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { MIN_STREAM_BATCH, STREAM_BATCH, streamList, type User, type UserStore } from '../src/index.js';

const user = (id: number): User => ({ id, name: `User ${id}`, email: `user-${id}@example.com`, created_at: '2026-01-01T00:00:00.000Z' });

/** A store of `total` users made up on the spot; it records the size of each page asked for after the first. */
function madeUpStore(total: number): { store: UserStore; asked: number[] } {
  const asked: number[] = [];
  const unused = (): never => {
    throw new Error('not used by the stream');
  };
  const store: UserStore = {
    init: async () => undefined,
    page: async (after, limit) => {
      if (after > 0) asked.push(limit);
      return Array.from({ length: Math.max(0, Math.min(limit, total - after)) }, (_, i) => user(after + i + 1));
    },
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

async function listed(total: number, bytesPerSecond: number, firstPage = STREAM_BATCH): Promise<number[]> {
  const { store, asked } = madeUpStore(total);
  const first = await store.page(0, firstPage);
  const text = await readAt(
    streamList(store, first, JSON.stringify, (error) => {
      throw error;
    }),
    bytesPerSecond,
  );
  expect(JSON.parse(text)).toEqual(Array.from({ length: total }, (_, i) => user(i + 1)));
  return asked;
}

describe('a streamed list sizes its batches to the client', () => {
  it('reads the largest batches for a client that keeps up, and stops after the first batch short of its size', async () => {
    const asked = await listed(30_500, Infinity);
    // The first two before the client's pace is known (after the first page), then the largest.
    expect(asked, `batch sizes ${asked.join(' ')}`).toEqual([
      MIN_STREAM_BATCH,
      MIN_STREAM_BATCH,
      ...asked.slice(2).map(() => STREAM_BATCH),
    ]);
    expect(asked.length).toBe(2 + Math.ceil((30_500 - STREAM_BATCH - 2 * MIN_STREAM_BATCH) / STREAM_BATCH));
  });

  it('reads batches of what a client slower than the database reads in a second', async () => {
    // 50 kB/s: about 400 users in the second a batch should last; the first page is 700 users (75 kB).
    const asked = await listed(1_700, 50_000, 700);
    expect(asked.slice(0, 2)).toEqual([MIN_STREAM_BATCH, MIN_STREAM_BATCH]);
    const paced = asked.slice(2);
    expect(paced.length, `batch sizes ${asked.join(' ')}`).toBeGreaterThan(1);
    for (const size of paced) expect(size, `batch sizes ${asked.join(' ')}`).toBeGreaterThan(MIN_STREAM_BATCH);
    for (const size of paced) expect(size, `batch sizes ${asked.join(' ')}`).toBeLessThan(STREAM_BATCH);
  });

  it('ends with an empty batch when the last one was full', async () => {
    const asked = await listed(STREAM_BATCH + 2 * MIN_STREAM_BATCH, Infinity);
    expect(asked).toEqual([MIN_STREAM_BATCH, MIN_STREAM_BATCH, STREAM_BATCH]);
  });
});
