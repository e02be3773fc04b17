import { startReplicas, type Replica } from '@sample-services/testing/loopback-replicas';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { App } from '@sample-services/kit/server';
import { createFrontendApp } from '../src/app.js';
import { ManualTimers } from '@sample-services/testing/manual-timers';
import { createBackendClient } from '../src/backend-client.js';
import { getRaw } from './support.js';

// `backend` scaled to several replicas is one port at several addresses: here 127.0.0.1 to .3
// (Linux routes all of 127.0.0.0/8 to the loopback interface), and a resolver the test answers
// for, in place of Docker's DNS. The resolve and skip timers run on the test's clock.
const [one, two, three] = ['127.0.0.1', '127.0.0.2', '127.0.0.3'] as const;
const RESOLVE_MS = 50;

/**
 * Without this, a frontend under load kept its kept-alive connections to the replicas it had and
 * a scale-up of the backend added no capacity: on Docker Swarm, backend 2 -> 4 under load, the two
 * new replicas answered 0 of about 10,500 requests in 20 s.
 */
describe("the frontend follows the addresses of the backend's host name", () => {
  let replicas: Replica[];
  let dns: string[];
  let timers: ManualTimers;
  let frontend: App;
  let url: string;

  beforeEach(async () => {
    replicas = await startReplicas([one, two, three]);
    dns = [one];
    timers = new ManualTimers();
    const backend = createBackendClient({
      url: new URL(`http://backend.test:${(replicas[0] as Replica).port}`),
      timeoutMs: 2_000,
      log: pino({ enabled: false }),
      resolve: () => Promise.resolve(dns),
      resolveIntervalMs: RESOLVE_MS,
      timers,
    });
    frontend = createFrontendApp({ logger: false, backend });
    url = `${await frontend.listen({ port: 0, host: '127.0.0.1' })}/api/users`;
  });
  afterEach(async () => {
    await frontend.close();
    await Promise.all(replicas.map((replica) => replica.close()));
  });

  /** One resolve interval passes: the answer of now is in use. */
  const resolvedAgain = (): Promise<void> => timers.advance(RESOLVE_MS);
  const served = (): number[] => replicas.map((replica) => replica.requests);
  const statuses = async (count: number): Promise<number[]> => {
    const seen: number[] = [];
    for (let i = 0; i < count; i += 1) seen.push((await getRaw(url)).status);
    return seen;
  };

  it('spreads requests over replicas added while it runs, in turn', async () => {
    expect(await statuses(12)).toEqual(Array<number>(12).fill(200));
    expect(served()).toEqual([12, 0, 0]);
    dns = [one, two, three];
    await resolvedAgain();
    expect(await statuses(30)).toEqual(Array<number>(30).fill(200));
    expect(served()).toEqual([22, 10, 10]);
  });

  it('stops using a replica gone from the answer, and one that refuses is passed over: no failed request', async () => {
    dns = [one, two, three];
    await resolvedAgain();
    // Still listed but down (stopping before DNS forgets it): its requests go to another address.
    await (replicas[2] as Replica).goDown();
    expect(await statuses(30)).toEqual(Array<number>(30).fill(200));
    // Gone from DNS too: its pool is closed, no request tries it.
    dns = [one, two];
    await resolvedAgain();
    const before = served();
    expect(await statuses(20)).toEqual(Array<number>(20).fill(200));
    expect(served().map((count, i) => count - (before[i] ?? 0))).toEqual([10, 10, 0]);
  });

  it('keeps the last addresses while the name does not resolve', async () => {
    dns = [one, two];
    await resolvedAgain();
    dns = [];
    await resolvedAgain();
    expect(await statuses(10)).toEqual(Array<number>(10).fill(200));
    expect(served()).toEqual([5, 5, 0]);
  });
});
