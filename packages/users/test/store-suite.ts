import { describe, expect, it } from 'vitest';
import { DuplicateEmailError, type UserStore } from '../src/index.js';
import { isoUtc } from '@svc/testing/contract/common';

/**
 * What every UserStore adapter must do. `open` returns a store on an empty database; `openMore`
 * a second store on the same database (another instance of the service).
 */
export function storeSuite(open: () => Promise<UserStore>, openSame: (store: UserStore) => Promise<UserStore>): void {
  const withStore = async (test: (store: UserStore) => Promise<void>): Promise<void> => {
    const store = await open();
    try {
      await store.init();
      await test(store);
    } finally {
      await store.close();
    }
  };

  describe('a user store', () => {
    it('lists nothing on an empty database', () =>
      withStore(async (store) => {
        expect(await store.list()).toEqual([]);
      }));

    it('creates users with increasing ids and a UTC creation time, and lists them by id', () =>
      withStore(async (store) => {
        const before = Date.now();
        const ada = await store.create({ name: 'Ada', email: 'ada@example.com' });
        const bob = await store.create({ name: 'Bob', email: 'bob@example.com' });
        expect(Object.keys(ada).sort()).toEqual(['created_at', 'email', 'id', 'name']);
        expect(ada).toMatchObject({ name: 'Ada', email: 'ada@example.com' });
        expect(Number.isInteger(ada.id)).toBe(true);
        expect(bob.id).toBeGreaterThan(ada.id);
        expect(ada.created_at).toMatch(isoUtc);
        expect(Math.abs(Date.parse(ada.created_at) - before)).toBeLessThan(60_000);
        expect(await store.list()).toEqual([ada, bob]);
      }));

    it('keeps long and non-ASCII values exactly', () =>
      withStore(async (store) => {
        const user = { name: 'Zoë 李 🙂'.padEnd(100, 'x'), email: `${'é'.repeat(100)}@example.org` };
        const stored = await store.create(user);
        expect(stored).toMatchObject(user);
        expect(await store.list()).toEqual([stored]);
      }));

    it('rejects a second user with the same email with DuplicateEmailError and stores nothing', () =>
      withStore(async (store) => {
        const first = await store.create({ name: 'One', email: 'same@example.com' });
        await expect(store.create({ name: 'Two', email: 'same@example.com' })).rejects.toBeInstanceOf(DuplicateEmailError);
        expect(await store.list()).toEqual([first]);
      }));

    it('lets exactly one of 50 simultaneous creates of one email succeed', () =>
      withStore(async (store) => {
        const results = await Promise.allSettled(
          Array.from({ length: 50 }, (_, i) => store.create({ name: `Racer ${i}`, email: 'race@example.com' })),
        );
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        const rejections = results.filter((r) => r.status === 'rejected');
        expect(rejections).toHaveLength(49);
        for (const r of rejections) expect(r.reason).toBeInstanceOf(DuplicateEmailError);
        expect(await store.list()).toHaveLength(1);
      }));

    it('answers the probe', () =>
      withStore(async (store) => {
        expect(await store.ping(1_500)).toBe(true);
      }));

    it('lists what another instance created since its own last list, and its own creates', async () => {
      const first = await open();
      const second = await openSame(first);
      try {
        await Promise.all([first.init(), second.init()]);
        expect(await first.list()).toEqual([]);
        const theirs = await second.create({ name: 'Theirs', email: 'theirs@example.com' });
        expect(await first.list()).toEqual([theirs]);
        const own = await first.create({ name: 'Own', email: 'own@example.com' });
        expect(await first.list()).toEqual([theirs, own]);
        expect(await second.list()).toEqual([theirs, own]);
      } finally {
        await Promise.all([first.close(), second.close()]);
      }
    });

    it('keeps its users for the next instance, and several instances may create the table at once', async () => {
      const first = await open();
      const others = await Promise.all(Array.from({ length: 4 }, () => openSame(first)));
      try {
        await Promise.all([first, ...others].map((store) => store.init()));
        const stored = await first.create({ name: 'Kept', email: 'kept@example.com' });
        await first.close();
        expect(await others[0]!.list()).toEqual([stored]);
      } finally {
        await Promise.all(others.map((store) => store.close()));
      }
    });
  });
}
