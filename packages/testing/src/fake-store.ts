import type { UserStore } from '@sample-services/users/user-store';

/** A UserStore whose every answer a test chooses; unset methods fail the test when called. */
export function fakeStore(overrides: Partial<UserStore>): UserStore & { closed: boolean } {
  const unexpected = (name: string) => () => Promise.reject(new Error(`unexpected call to ${name}`));
  const store = {
    closed: false,
    init: unexpected('init'),
    page: unexpected('page'),
    create: unexpected('create'),
    ping: () => Promise.resolve(true),
    close: async () => {
      store.closed = true;
    },
    ...overrides,
  };
  return store;
}
