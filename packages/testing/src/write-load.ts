import { uniqueEmail, type ListedUser } from './contract/users.js';

/** A create answered 201: the user as its answer gave it, when the request left and when the answer was in. */
export interface Acknowledged {
  user: ListedUser;
  /** Milliseconds since the epoch. */
  sentAt: number;
  ackedAt: number;
}

export interface WriteLoad {
  /** Every create answered 201 so far, in the order the answers came. */
  readonly acknowledged: Acknowledged[];
  /** Anything else: `status 503`, or the error's name (`TimeoutError`, `TypeError` for a refused connection). */
  readonly failures: Record<string, number>;
  /** Resolves once `count` creates sent at or after `since` (ms since the epoch) were answered 201; rejects after `timeoutMs`. */
  acknowledgedSince: (since: number, count: number, timeoutMs?: number) => Promise<void>;
  /** Stops the loops once their creates in flight are answered. */
  stop: () => Promise<void>;
}

/**
 * Client loops POSTing new users back to back to `/api/users` of the given base URLs (loop i to
 * URL i modulo their number), one create in flight per loop, until stop(), recording every 201.
 */
export function startWriteLoad(baseUrls: string[], loops = 4): WriteLoad {
  const acknowledged: Acknowledged[] = [];
  const failures: Record<string, number> = {};
  let running = true;
  const loop = async (index: number): Promise<void> => {
    const url = `${baseUrls[index % baseUrls.length]}/api/users`;
    for (let n = 0; running; n += 1) {
      const sentAt = Date.now();
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: `Writer ${index} #${n}`, email: uniqueEmail(`w${index}`) }),
          signal: AbortSignal.timeout(10_000),
        });
        const body = await res.text();
        if (res.status === 201) acknowledged.push({ user: JSON.parse(body) as ListedUser, sentAt, ackedAt: Date.now() });
        else failures[`status ${res.status}`] = (failures[`status ${res.status}`] ?? 0) + 1;
      } catch (error) {
        const kind = (error as Error).name;
        failures[kind] = (failures[kind] ?? 0) + 1;
      }
    }
  };
  const done = Promise.all(Array.from({ length: loops }, (_, i) => loop(i)));
  return {
    acknowledged,
    failures,
    acknowledgedSince: async (since, count, timeoutMs = 30_000) => {
      const deadline = Date.now() + timeoutMs;
      while (acknowledged.filter((a) => a.sentAt >= since).length < count) {
        if (Date.now() > deadline) throw new Error(`fewer than ${count} creates answered 201 within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    stop: async () => {
      running = false;
      await done;
    },
  };
}

/** GET /api/users, the whole list, parsed (without the contract's per-user checks: it may hold many). */
export async function listAllUsers(baseUrl: string): Promise<ListedUser[]> {
  const res = await fetch(`${baseUrl}/api/users`);
  if (res.status !== 200) throw new Error(`GET ${baseUrl}/api/users answered ${res.status}`);
  return (await res.json()) as ListedUser[];
}

/** What a restore holds, set against what was written and when the backup ran. */
export interface RestoreCheck {
  /** Creates answered 201 before the backup began: every one must be restored as answered. */
  before: number;
  /** Answered after the backup began but sent before it ended: in the backup or not, either is right. */
  during: number;
  duringRestored: number;
  /** Sent after the backup ended: none may be restored. */
  after: number;
  restored: number;
  /** Users there before the load (e.g. seeded) or answered 201 before the backup began that are not restored as they were. */
  missing: ListedUser[];
  /** Restored users that are neither one there before the load nor a 201's user with the same id, name, email and created_at. */
  unknown: ListedUser[];
  /** Restored users whose create was sent after the backup ended. */
  late: ListedUser[];
}

const key = (u: ListedUser): string => JSON.stringify([u.id, u.name, u.email, u.created_at]);

/** The users answered 201 that a list does not hold as their answers gave them (id, name, email, created_at). */
export function missingAcknowledged(acknowledged: Acknowledged[], listed: ListedUser[]): ListedUser[] {
  const listedKeys = new Set(listed.map(key));
  return acknowledged.map((a) => a.user).filter((user) => !listedKeys.has(key(user)));
}

/**
 * Sets a restored list against the users there before the load (`existing`), the load's 201s and
 * the backup's start and end (ms since the epoch, taken around the backup command).
 */
export function checkRestore(
  existing: ListedUser[],
  acknowledged: Acknowledged[],
  restored: ListedUser[],
  backup: { began: number; ended: number },
): RestoreCheck {
  const restoredKeys = new Set(restored.map(key));
  // `began` is read once the answers awaited are in, so an answer of that same millisecond came
  // before it (counted after, the drill's 300th answer went missing from its count in a run).
  const before = acknowledged.filter((a) => a.ackedAt <= backup.began);
  const during = acknowledged.filter((a) => a.ackedAt > backup.began && a.sentAt < backup.ended);
  const after = acknowledged.filter((a) => a.sentAt >= backup.ended);
  const known = new Set([...existing, ...acknowledged.map((a) => a.user)].map(key));
  const lateKeys = new Set(after.map((a) => key(a.user)));
  return {
    before: before.length,
    during: during.length,
    duringRestored: during.filter((a) => restoredKeys.has(key(a.user))).length,
    after: after.length,
    restored: restored.length,
    missing: [...existing, ...before.map((a) => a.user)].filter((u) => !restoredKeys.has(key(u))),
    unknown: restored.filter((u) => !known.has(key(u))),
    late: restored.filter((u) => lateKeys.has(key(u))),
  };
}

/** One line for the test output: the counts of a check and how long the backup and the restore took. */
export function restoreSummary(label: string, check: RestoreCheck, backupMs: number, restoreMs: number): string {
  return (
    `${label}: ${check.before} users acknowledged before the backup began (${check.missing.length} missing), ` +
    `${check.duringRestored} of the ${check.during} acknowledged during it in the backup, ${check.late.length} of the ` +
    `${check.after} sent after it; ${check.restored} restored in all. ` +
    `Backup ${(backupMs / 1000).toFixed(2)} s, restore ${(restoreMs / 1000).toFixed(1)} s`
  );
}
