import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  notFound,
  replicaAddresses,
  resolveWith,
  startReplica,
  startReplicas,
  type FakeDns,
  type Replica,
  type ReplicaAnswer,
} from '@sample-services/testing/loopback-replicas';
import { isUnreachable } from '../src/upstream-errors.js';
import { UpstreamAddresses, type UpstreamAddress, type UpstreamAddressesOptions } from '../src/upstream-addresses.js';
import { ManualTimers } from '@sample-services/testing/manual-timers';

// `web` scaled to several containers (replicaAddresses), with a fake DNS. The resolve and skip timers
// run on the test's clock.
const [one, two, three, four] = replicaAddresses;
const RESOLVE_MS = 50;

describe('UpstreamAddresses follows the addresses of its upstream host name', () => {
  let replicas: Replica[];
  let port: number;
  let timers: ManualTimers;
  const started: UpstreamAddresses[] = [];

  beforeEach(async () => {
    replicas = await startReplicas([one, two, three, four]);
    port = (replicas[0] as Replica).port;
    timers = new ManualTimers();
  });
  afterEach(async () => {
    for (const replica of replicas) replica.releaseHanging();
    await Promise.all(started.splice(0).map((addresses) => addresses.close()));
    await Promise.all(replicas.map((replica) => replica.close()));
  });

  const replica = (address: string): Replica => replicas.find((r) => r.address === address) as Replica;

  async function startAddresses(dns: FakeDns, options: Partial<UpstreamAddressesOptions> = {}): Promise<UpstreamAddresses> {
    const addresses = new UpstreamAddresses({
      upstream: new URL(`http://web.test:${port}`),
      pool: { connections: 8, headersTimeout: 5_000, bodyTimeout: 5_000, connect: { timeout: 5_000 } },
      resolve: resolveWith(dns),
      resolveIntervalMs: RESOLVE_MS,
      skipMs: 10_000,
      log: pino({ enabled: false }),
      timers,
      ...options,
    });
    started.push(addresses);
    await addresses.start();
    return addresses;
  }

  /** One resolve interval passes: the answer of now is in use. */
  async function resolvedAgain(dns: FakeDns): Promise<void> {
    const calls = dns.calls;
    await timers.advance(RESOLVE_MS);
    expect(dns.calls).toBe(calls + 1);
  }

  /**
   * A GET as a caller sends it: to the next address, and when that one cannot be connected to,
   * passed over and the request sent to another, until none is left. The answer, which must be a 200.
   */
  async function get(addresses: UpstreamAddresses, path = '/'): Promise<ReplicaAnswer> {
    const tried: UpstreamAddress[] = [];
    let failure = addresses.noAddressError;
    for (let target = addresses.pick(); target !== undefined; target = addresses.another(tried)) {
      try {
        const res = await target.pool.request({ method: 'GET', path });
        expect(res.statusCode).toBe(200);
        return (await res.body.json()) as ReplicaAnswer;
      } catch (error) {
        if (!isUnreachable(error)) throw error;
        failure = error;
        addresses.skip(target, error);
        tried.push(target);
      }
    }
    throw failure;
  }

  /** How many of `count` requests, sent one after the other, each replica answered. */
  async function spread(addresses: UpstreamAddresses, count: number): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (let i = 0; i < count; i += 1) {
      const by = (await get(addresses)).replica;
      counts[by] = (counts[by] ?? 0) + 1;
    }
    return counts;
  }

  it("spreads requests over every address in turn, each on kept-alive connections, with the upstream's name as Host", async () => {
    const addresses = await startAddresses({ answer: [one, two, three], calls: 0 });
    const hosts = new Set<unknown>();
    const counts: Record<string, number> = {};
    for (let i = 0; i < 30; i += 1) {
      const answer = await get(addresses, `/r/${i}`);
      counts[answer.replica] = (counts[answer.replica] ?? 0) + 1;
      hosts.add(answer.headers.host);
    }
    expect(counts).toEqual({ [one]: 10, [two]: 10, [three]: 10 });
    expect([...hosts]).toEqual([`web.test:${port}`]);
    // One connection each, reused: a keep-alive pool per address.
    expect([one, two, three].map((a) => replica(a).connections)).toEqual([1, 1, 1]);
    expect(replica(four).requests).toBe(0);
  });

  it('sends traffic to a new address after the next resolution, without a restart', async () => {
    const dns: FakeDns = { answer: [one, two], calls: 0 };
    const addresses = await startAddresses(dns);
    expect(await spread(addresses, 4)).toEqual({ [one]: 2, [two]: 2 });
    dns.answer = [one, two, three]; // docker compose up --scale web=3
    expect(await spread(addresses, 4)).toEqual({ [one]: 2, [two]: 2 }); // until the next resolution
    await resolvedAgain(dns);
    expect(await spread(addresses, 9)).toEqual({ [one]: 3, [two]: 3, [three]: 3 });
  });

  it('closes the pool of an address gone from DNS once its requests in flight finished', async () => {
    const dns: FakeDns = { answer: [one, two], calls: 0 };
    const addresses = await startAddresses(dns);
    const held = [replica(one).nextHanging(), replica(two).nextHanging()];
    const first = get(addresses, '/slow?hang');
    const second = get(addresses, '/slow?hang');
    await Promise.all(held);

    dns.answer = [one]; // scaled down to one
    await resolvedAgain(dns);
    expect(await spread(addresses, 4)).toEqual({ [one]: 4 });
    expect(replica(two).openConnections).toBe(1); // still serving its request

    replica(two).releaseHanging();
    replica(one).releaseHanging();
    expect((await Promise.all([first, second])).map((answer) => answer.replica)).toEqual([one, two]);
    // Then its pool closes its connection; the remaining address keeps its own.
    await expect.poll(() => replica(two).openConnections, { timeout: 5_000 }).toBe(0);
    expect(replica(one).openConnections).toBeGreaterThan(0);
  });

  it('passes over an address that failed to connect for the whole skip time, then tries it again', async () => {
    const addresses = await startAddresses({ answer: [one, two], calls: 0 }, { skipMs: 10_000 });
    const timedOut = Object.assign(new Error('Connect Timeout Error'), { code: 'UND_ERR_CONNECT_TIMEOUT' });
    addresses.skip(addresses.pick() as UpstreamAddress, timedOut); // .1 did not connect in time
    expect(await spread(addresses, 4)).toEqual({ [two]: 4 });
    await timers.advance(9_999);
    expect(await spread(addresses, 4)).toEqual({ [two]: 4 });
    await timers.advance(1);
    expect(await spread(addresses, 4)).toEqual({ [one]: 2, [two]: 2 });
  });

  it('passes over a refused address (a replica still starting) for 1 s only, not the whole skip time', async () => {
    const addresses = await startAddresses({ answer: [one, two], calls: 0 }, { skipMs: 10_000 });
    await replica(two).goDown();
    expect(await spread(addresses, 2)).toEqual({ [one]: 2 }); // refused by .2, then sent to .1
    await replica(two).comeUp();
    expect(await spread(addresses, 4)).toEqual({ [one]: 4 });
    await timers.advance(999);
    expect(await spread(addresses, 4)).toEqual({ [one]: 4 });
    await timers.advance(1);
    expect(await spread(addresses, 4)).toEqual({ [one]: 2, [two]: 2 });
  });

  it('with every address passed over, still tries each', async () => {
    const addresses = await startAddresses({ answer: [one, two], calls: 0 });
    await replica(one).goDown();
    await replica(two).goDown();
    await expect(get(addresses)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await replica(two).comeUp();
    expect(await spread(addresses, 3)).toEqual({ [two]: 3 });
  });

  it('keeps the last addresses while the name does not resolve, logs that once, and follows it again after', async () => {
    const chunks: string[] = [];
    const log = pino(new Writable({ write: (chunk: Buffer, _encoding, done) => done(void chunks.push(chunk.toString())) }));
    const logged = (): { level: number; msg: string }[] =>
      chunks
        .join('')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { level: number; msg: string });
    const dns: FakeDns = { answer: [one, two], calls: 0 };
    const addresses = await startAddresses(dns, { log });
    dns.answer = notFound();
    await resolvedAgain(dns);
    await resolvedAgain(dns);
    expect(await spread(addresses, 4)).toEqual({ [one]: 2, [two]: 2 });
    dns.answer = [];
    await resolvedAgain(dns);
    expect(await spread(addresses, 4)).toEqual({ [one]: 2, [two]: 2 });

    dns.answer = [three];
    await resolvedAgain(dns);
    expect(await spread(addresses, 2)).toEqual({ [three]: 2 });
    expect(logged().map((line) => [line.level, line.msg])).toEqual([
      [30, `upstream web.test resolves to ${one}, ${two}`],
      [40, `cannot resolve upstream web.test: keeping ${one}, ${two}`],
      [30, 'upstream web.test resolves again'],
      [30, `upstream web.test resolves to ${three}`],
    ]);
  });

  it('starts while the name does not resolve yet: no address, and why, until it does', async () => {
    const dns: FakeDns = { answer: notFound(), calls: 0 };
    const addresses = await startAddresses(dns);
    expect(addresses.pick()).toBeUndefined();
    expect(addresses.noAddressError).toBe(dns.answer);
    dns.answer = [one];
    await resolvedAgain(dns);
    expect((await get(addresses)).replica).toBe(one);
  });

  it.each(['127.0.0.1', 'localhost'])('never resolves an upstream named %s', async (name) => {
    const dns: FakeDns = { answer: notFound(), calls: 0 };
    const addresses = await startAddresses(dns, { upstream: new URL(`http://${name}:${port}`) });
    expect(await spread(addresses, 3)).toEqual({ [one]: 3 });
    expect(timers.waiting).toBe(0);
    await timers.advance(3 * RESOLVE_MS);
    expect(dns.calls).toBe(0);
  });

  it('connects to an IPv6 address', async (context) => {
    let v6: Replica;
    try {
      v6 = await startReplica('::1', port);
    } catch (error) {
      return context.skip(`no IPv6 loopback here: ${String(error)}`);
    }
    replicas.push(v6);
    const addresses = await startAddresses({ answer: ['::1', one], calls: 0 });
    expect(await spread(addresses, 4)).toEqual({ '::1': 2, [one]: 2 });
  });
});
