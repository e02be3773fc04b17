import { createServer } from '@sample-services/kit/server';
import { describe, expect, it } from 'vitest';
import { createUserPlugin } from '../src/routes.js';
import { DatabaseUnavailableError, DuplicateEmailError, type UserStore } from '../src/user-store.js';
import type { BatchOptions } from '../src/write-batcher.js';
import type { User } from '@sample-services/users-api/schemas';

/** Every user, read page after page as the list route reads them, and parsed. */
export async function listAll(store: UserStore, pageSize = 1000): Promise<User[]> {
  const users: User[] = [];
  for (let after = 0; ;) {
    const page = await store.page(after, pageSize);
    users.push(...(JSON.parse(`[${page.json}]`) as User[]));
    if (!page.more || page.lastId === undefined) return users;
    after = page.lastId;
  }
}
import { isoUtc } from '@sample-services/testing/contract/common';

/** The creates' outcomes, settled, with the batch sizes the store reported meanwhile. */
function batchesOf(): { options: BatchOptions; sizes: number[] } {
  const sizes: number[] = [];
  return { options: { onBatch: (size) => sizes.push(size) }, sizes };
}

/**
 * What every UserStore adapter must do. `open` returns a store on an empty database (with the
 * batch options given); `openSame` a second store on the same database (another instance of the service).
 */
export function storeSuite(open: (options?: BatchOptions) => Promise<UserStore>, openSame: (store: UserStore) => Promise<UserStore>): void {
  const withStore = async (test: (store: UserStore) => Promise<void>, options?: BatchOptions): Promise<void> => {
    const store = await open(options);
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
        expect(await listAll(store)).toEqual([]);
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
        expect(await listAll(store)).toEqual([ada, bob]);
      }));

    it('keeps long and non-ASCII values exactly', () =>
      withStore(async (store) => {
        const user = { name: 'Zoë 李 🙂'.padEnd(100, 'x'), email: `${'é'.repeat(100)}@example.org` };
        const stored = await store.create(user);
        expect(stored).toMatchObject(user);
        expect(await listAll(store)).toEqual([stored]);
      }));

    it('rejects a second user with the same email with DuplicateEmailError and stores nothing', () =>
      withStore(async (store) => {
        const first = await store.create({ name: 'One', email: 'same@example.com' });
        await expect(store.create({ name: 'Two', email: 'same@example.com' })).rejects.toBeInstanceOf(DuplicateEmailError);
        expect(await listAll(store)).toEqual([first]);
      }));

    it('takes an email as taken when it differs only in case or Unicode normalization, and keeps emails as given', () =>
      withStore(async (store) => {
        const alice = await store.create({ name: 'Alice', email: 'Alice@Example.com' });
        await expect(store.create({ name: 'Upper', email: 'ALICE@example.com' })).rejects.toBeInstanceOf(DuplicateEmailError);
        const jose = await store.create({ name: 'José', email: 'jos\u00e9@example.com' });
        await expect(store.create({ name: 'Decomposed', email: 'jose\u0301@example.com' })).rejects.toBeInstanceOf(DuplicateEmailError);
        await expect(store.create({ name: 'Both', email: 'JOSE\u0301@EXAMPLE.COM' })).rejects.toBeInstanceOf(DuplicateEmailError);
        // Within one batch too: the first of the look-alikes is stored.
        const together = await Promise.allSettled([
          store.create({ name: 'Bob', email: 'bob@example.com' }),
          store.create({ name: 'BOB', email: 'BOB@example.com' }),
        ]);
        expect(together.map((result) => result.status)).toEqual(['fulfilled', 'rejected']);
        const bob = (together[0] as PromiseFulfilledResult<User>).value;
        expect(await listAll(store)).toEqual([alice, jose, bob]);
        expect(jose.email).toBe('jos\u00e9@example.com');
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
        expect(await listAll(store)).toHaveLength(1);
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
        expect(await listAll(first)).toEqual([]);
        const theirs = await second.create({ name: 'Theirs', email: 'theirs@example.com' });
        expect(await listAll(first)).toEqual([theirs]);
        const own = await first.create({ name: 'Own', email: 'own@example.com' });
        expect(await listAll(first)).toEqual([theirs, own]);
        expect(await listAll(second)).toEqual([theirs, own]);
      } finally {
        await Promise.all([first.close(), second.close()]);
      }
    });

    it('writes each page as the JSON text JSON.stringify gives for its users, escapes included', () =>
      withStore(async (store) => {
        const names = ['quo"te', 'back\\slash', 'ctl\u0001\u001f\u007f', 'nl\n\r\t\b\f', 'ü€😀', 'ls\u2028ps\u2029', '</script>'];
        const users: User[] = [];
        for (const [i, name] of names.entries()) users.push(await store.create({ name, email: `u${i}@example.com` }));
        const whole = await store.page(0, 1000);
        expect(`[${whole.json}]`).toBe(JSON.stringify(users));
        expect(whole).toMatchObject({ lastId: users.at(-1)!.id, more: false });
        const firstTwo = await store.page(0, 2);
        expect(firstTwo).toEqual({ json: JSON.stringify(users.slice(0, 2)).slice(1, -1), lastId: users[1]!.id, more: true });
        const rest = await store.page(users[1]!.id, 1000);
        expect(`[${rest.json}]`).toBe(JSON.stringify(users.slice(2)));
        expect(await store.page(users.at(-1)!.id, 10)).toEqual({ json: '', lastId: undefined, more: false });
      }));

    it('pages by id: no user twice or missing, more is false exactly on the last page', () =>
      withStore(async (store) => {
        const created: User[] = [];
        for (let i = 0; i < 25; i += 1) created.push(await store.create({ name: `P${i}`, email: `p${i}@example.com` }));
        expect(await listAll(store, 5)).toEqual(created);
        expect(await listAll(store, 7)).toEqual(created);
        expect((await store.page(created[19]!.id, 5)).more).toBe(false);
        expect((await store.page(created[18]!.id, 5)).more).toBe(true);
      }));

    it('sees a user created after a page was read', () =>
      withStore(async (store) => {
        const first = await store.create({ name: 'First', email: 'first@example.com' });
        expect((await store.page(0, 10)).lastId).toBe(first.id);
        const second = await store.create({ name: 'Second', email: 'second@example.com' });
        expect(await listAll(store)).toEqual([first, second]);
      }));

    describe('group commit', () => {
      const created = (results: PromiseSettledResult<User>[]): User[] =>
        results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));

      it('writes creates that arrive together in one batch, each with its own id, in the order they came', async () => {
        const { options, sizes } = batchesOf();
        await withStore(async (store) => {
          const users = await Promise.all(
            Array.from({ length: 50 }, (_, i) => store.create({ name: `Batch ${i}`, email: `batch${i}@example.com` })),
          );
          expect(sizes).toEqual([50]);
          expect(users.map((user) => user.email)).toEqual(Array.from({ length: 50 }, (_, i) => `batch${i}@example.com`));
          for (const [i, user] of users.entries()) if (i > 0) expect(user.id).toBeGreaterThan(users[i - 1]!.id);
          expect(await listAll(store)).toEqual(users);
        }, options);
      });

      it('answers a duplicate in a batch (of its own or of an existing user) alone, the first of an email winning', async () => {
        const { options, sizes } = batchesOf();
        await withStore(async (store) => {
          const existing = await store.create({ name: 'Existing', email: 'taken@example.com' });
          const results = await Promise.allSettled([
            store.create({ name: 'First', email: 'twice@example.com' }),
            store.create({ name: 'Taken', email: 'taken@example.com' }),
            store.create({ name: 'Between', email: 'between@example.com' }),
            store.create({ name: 'Second', email: 'twice@example.com' }),
            store.create({ name: 'Last', email: 'last@example.com' }),
          ]);
          expect(sizes).toEqual([1, 5]);
          expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled']);
          for (const i of [1, 3]) expect((results[i] as PromiseRejectedResult).reason).toBeInstanceOf(DuplicateEmailError);
          expect(((results[1] as PromiseRejectedResult).reason as DuplicateEmailError).email).toBe('taken@example.com');
          const [first, between, last] = created(results);
          expect(first).toMatchObject({ name: 'First', email: 'twice@example.com' });
          expect(await listAll(store)).toEqual([existing, first, between, last]);
        }, options);
      });

      it('fails a create the database refuses on its own, and creates the others of its batch', async () => {
        const { options, sizes } = batchesOf();
        await withStore(async (store) => {
          const results = await Promise.allSettled([
            store.create({ name: 'Before', email: 'before@example.com' }),
            store.create({ name: 'x'.repeat(101), email: 'too-long@example.com' }), // past the column's limit
            store.create({ name: 'After', email: 'after@example.com' }),
          ]);
          expect(sizes[0]).toBe(3);
          expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
          const { reason } = results[1] as PromiseRejectedResult;
          expect(reason).not.toBeInstanceOf(DuplicateEmailError);
          expect(reason).not.toBeInstanceOf(DatabaseUnavailableError);
          expect((await listAll(store)).map((user) => user.name)).toEqual(['Before', 'After']);
        }, options);
      });

      it('refuses creates past the queue bound as unavailable, and writes every one it accepted', () =>
        withStore(
          async (store) => {
            const results = await Promise.allSettled(
              Array.from({ length: 10 }, (_, i) => store.create({ name: `Q${i}`, email: `q${i}@example.com` })),
            );
            expect(results.map((result) => result.status)).toEqual([
              ...Array<string>(3).fill('fulfilled'),
              ...Array<string>(7).fill('rejected'),
            ]);
            for (const result of results.slice(3)) {
              expect((result as PromiseRejectedResult).reason).toBeInstanceOf(DatabaseUnavailableError);
              expect(((result as PromiseRejectedResult).reason as Error).message).toMatch(/write queue is full/);
            }
            expect(await listAll(store)).toEqual(created(results));
            // Refused only while the queue was full.
            expect(await store.create({ name: 'Later', email: 'later@example.com' })).toMatchObject({ name: 'Later' });
          },
          { maxQueue: 3, maxBatch: 2 },
        ));

      it('answers a create refused by a full queue 503 with Retry-After, and 201 to the others', () =>
        withStore(
          async (store) => {
            const app = createServer({ logger: false, api: { title: 'users', description: 'store suite' } });
            void app.register(createUserPlugin(store));
            try {
              const answers = await Promise.all(
                Array.from({ length: 20 }, (_, i) =>
                  app.inject({ method: 'POST', url: '/api/users', payload: { name: `H${i}`, email: `h${i}@example.com` } }),
                ),
              );
              const refused = answers.filter((res) => res.statusCode === 503);
              expect(refused.length).toBeGreaterThan(0);
              for (const res of refused) {
                expect(res.headers['retry-after']).toBe('1');
                expect(res.json()).toEqual({ error: 'Database unavailable; try again later' });
              }
              const acknowledged = answers.filter((res) => res.statusCode === 201).map((res) => res.json<User>());
              expect(acknowledged.length + refused.length).toBe(20);
              expect(await listAll(store)).toEqual(acknowledged.sort((a, b) => a.id - b.id));
            } finally {
              await app.close();
            }
          },
          { maxQueue: 1, maxBatch: 1 },
        ));

      it('shows each acknowledged create to the next list read, whichever batch it was in', () =>
        withStore(async (store) => {
          for (let round = 0; round < 10; round += 1) {
            await store.page(0, 1000); // the head of the list as it was, cached where the store caches it
            await Promise.all(
              Array.from({ length: 8 }, async (_, i) => {
                const user = await store.create({ name: `R${round}.${i}`, email: `r${round}.${i}@example.com` });
                expect((await store.page(0, 1000)).json).toContain(JSON.stringify(user));
              }),
            );
          }
        }));

      it('close() writes and answers the creates it had accepted, then refuses more', async () => {
        const store = await open();
        await store.init();
        const pending = Array.from({ length: 20 }, (_, i) => store.create({ name: `Pending ${i}`, email: `pending${i}@example.com` }));
        const closed = store.close();
        await expect(store.create({ name: 'Late', email: 'late@example.com' })).rejects.toBeInstanceOf(DatabaseUnavailableError);
        const users = await Promise.all(pending);
        await closed;
        const other = await openSame(store);
        try {
          expect(await listAll(other)).toEqual(users);
        } finally {
          await other.close();
        }
      });
    });

    it('keeps its users for the next instance, and several instances may create the table at once', async () => {
      const first = await open();
      const others = await Promise.all(Array.from({ length: 4 }, () => openSame(first)));
      try {
        await Promise.all([first, ...others].map((store) => store.init()));
        const stored = await first.create({ name: 'Kept', email: 'kept@example.com' });
        await first.close();
        expect(await listAll(others[0]!)).toEqual([stored]);
      } finally {
        await Promise.all(others.map((store) => store.close()));
      }
    });
  });
}
