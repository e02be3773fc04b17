import { describe, expect, it } from 'vitest';
import { DuplicateEmailError, type User, type UserStore } from '../src/index.js';

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
