import { describe, expect, it } from 'vitest';
import { Coalescer } from '../src/coalesce.js';

/**
 * A fake database: each query reads `version` when it is sent (as a statement's snapshot) and
 * answers when the test says so.
 */
function fakeDatabase() {
  const pending: { snapshot: number; answer: () => void; fail: (error: Error) => void }[] = [];
  const db = {
    version: 0,
    sent: 0,
    pending,
    query: (): Promise<number> => {
      db.sent += 1;
      const snapshot = db.version;
      return new Promise<number>((resolve, reject) => {
        pending.push({ snapshot, answer: () => resolve(snapshot), fail: reject });
      });
    },
    /** Answers the oldest query in flight, then lets the coalescer send the next one. */
    async answerNext(): Promise<void> {
      pending.shift()!.answer();
      await flush();
    },
  };
  return db;
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('Coalescer', () => {
  it('never gives a caller the result of a query sent before it arrived: a write acknowledged before it is seen', async () => {
    const db = fakeDatabase();
    const shared = new Coalescer<number>(10);
    const first = shared.run('0:100', db.query);
    await flush();
    expect(db.sent).toBe(1);
    db.version = 1; // a write acknowledged while the first query is in flight
    const second = shared.run('0:100', db.query);
    const third = shared.run('0:100', db.query);
    await flush();
    expect(db.sent).toBe(1); // one query in flight per key: the next waits
    await db.answerNext();
    expect(await first).toBe(0);
    expect(db.sent).toBe(2); // sent as soon as the first settled, for both who came meanwhile
    await db.answerNext();
    expect(await second).toBe(1);
    expect(await third).toBe(1);
  });

  it('runs different keys side by side and forgets a key once nobody waits', async () => {
    const db = fakeDatabase();
    const shared = new Coalescer<number>(10);
    const a = shared.run('0:100', db.query);
    const b = shared.run('100:100', db.query);
    await flush();
    expect(db.sent).toBe(2);
    await db.answerNext();
    await db.answerNext();
    await Promise.all([a, b]);
    db.version = 2;
    const later = shared.run('0:100', db.query); // nothing in flight: its own query, at once
    await flush();
    expect(db.sent).toBe(3);
    await db.answerNext();
    expect(await later).toBe(2);
  });

  it('gives the error of a shared query to every caller of it, and the next query runs afresh', async () => {
    const db = fakeDatabase();
    const shared = new Coalescer<number>(10);
    const first = shared.run('k', db.query);
    await flush();
    const waiters = [shared.run('k', db.query), shared.run('k', db.query)];
    await db.answerNext();
    await first;
    db.pending.shift()!.fail(new Error('database gone'));
    for (const waiter of waiters) await expect(waiter).rejects.toThrow('database gone');
    const after = shared.run('k', db.query);
    await flush();
    await db.answerNext();
    expect(await after).toBe(0);
  });

  it('gives the error of a first query to its caller alone, and still serves those who came meanwhile', async () => {
    const db = fakeDatabase();
    const shared = new Coalescer<number>(10);
    const first = shared.run('k', db.query);
    await flush();
    const waiter = shared.run('k', db.query);
    db.pending.shift()!.fail(new Error('cut'));
    await expect(first).rejects.toThrow('cut');
    await flush();
    await db.answerNext();
    expect(await waiter).toBe(0);
  });

  it('runs a query of its own for a caller past maxKeys keys', async () => {
    const db = fakeDatabase();
    const shared = new Coalescer<number>(1);
    const held = shared.run('a', db.query);
    const own = [shared.run('b', db.query), shared.run('b', db.query)];
    await flush();
    expect(db.sent).toBe(3);
    for (let i = 0; i < 3; i += 1) await db.answerNext();
    await Promise.all([held, ...own]);
  });
});
