import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { Dispatcher } from 'undici';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  notFound,
  replicaAddresses,
  resolveWith,
  startReplica,
  startReplicas,
  type FakeDns,
  type Replica,
  type ReplicaAnswer,
} from '@svc/testing/loopback-replicas';
import { upstreamDispatcher, type UpstreamDispatcherOptions } from '../src/upstream-dispatcher.js';

// `web` scaled to several containers (replicaAddresses), with a fake DNS. The clock the dns interceptor
// ages its answers by is the test's (Date alone is faked: sockets and timers run as ever).
const [one, two, three, four] = replicaAddresses;
const RESOLVE_MS = 50;

describe('upstreamDispatcher follows the addresses of its upstream host name', () => {
  let replicas: Replica[];
  let port: number;
  const started: Dispatcher[] = [];

  beforeEach(async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    replicas = await startReplicas([one, two, three, four]);
    port = (replicas[0] as Replica).port;
  });
  afterEach(async () => {
    vi.useRealTimers();
    for (const replica of replicas) replica.releaseHanging();
    await Promise.all(started.splice(0).map((dispatcher) => dispatcher.close()));
    await Promise.all(replicas.map((replica) => replica.close()));
  });

  const replica = (address: string): Replica => replicas.find((r) => r.address === address) as Replica;

  function dispatcherOn(dns: FakeDns, options: Partial<UpstreamDispatcherOptions> = {}): Dispatcher {
    const dispatcher = upstreamDispatcher({
      upstream: new URL(`http://web.test:${port}`),
      agent: { connections: 8, headersTimeout: 5_000, bodyTimeout: 5_000, connect: { timeout: 5_000 } },
      resolve: resolveWith(dns),
      resolveIntervalMs: RESOLVE_MS,
      log: pino({ enabled: false }),
      ...options,
    });
    started.push(dispatcher);
    return dispatcher;
  }

  /** The answer of a GET to the configured origin, which must be a 200. */
  async function get(dispatcher: Dispatcher, path = '/', origin = `http://web.test:${port}`): Promise<ReplicaAnswer> {
    const res = await dispatcher.request({ origin, method: 'GET', path });
    expect(res.statusCode).toBe(200);
    return (await res.body.json()) as ReplicaAnswer;
  }

  /** How many of `count` requests, sent one after the other, each replica answered. */
  async function spread(dispatcher: Dispatcher, count: number, origin?: string): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (let i = 0; i < count; i += 1) {
      const by = (await get(dispatcher, '/', origin)).replica;
      counts[by] = (counts[by] ?? 0) + 1;
    }
    return counts;
  }

  /** The answer in use grows older than RESOLVE_MS: the next request resolves the name again. */
  function expired(): void {
    vi.setSystemTime(Date.now() + RESOLVE_MS + 1);
  }

  it("spreads requests over every address in turn, each on kept-alive connections, with the upstream's name as Host", async () => {
    const dispatcher = dispatcherOn({ answer: [one, two, three], calls: 0 });
    const hosts = new Set<unknown>();
    const counts: Record<string, number> = {};
    for (let i = 0; i < 30; i += 1) {
      const answer = await get(dispatcher, `/r/${i}`);
      counts[answer.replica] = (counts[answer.replica] ?? 0) + 1;
      hosts.add(answer.headers.host);
    }
    expect(counts).toEqual({ [one]: 10, [two]: 10, [three]: 10 });
    expect([...hosts]).toEqual([`web.test:${port}`]);
    // One connection each, reused: a keep-alive pool per address.
    expect([one, two, three].map((a) => replica(a).connections)).toEqual([1, 1, 1]);
    expect(replica(four).requests).toBe(0);
  });

  it('sends traffic to a new address once the answer is RESOLVE_MS old, without a restart', async () => {
    const dns: FakeDns = { answer: [one, two], calls: 0 };
    const dispatcher = dispatcherOn(dns);
    expect(await spread(dispatcher, 4)).toEqual({ [one]: 2, [two]: 2 });
    dns.answer = [one, two, three]; // docker compose up --scale web=3
    expect(await spread(dispatcher, 4)).toEqual({ [one]: 2, [two]: 2 }); // until the answer expires
    expect(dns.calls).toBe(1);
    expired();
    expect(await spread(dispatcher, 9)).toEqual({ [one]: 3, [two]: 3, [three]: 3 });
    expect(dns.calls).toBe(2);
  });

  it('finishes the requests in flight on an address gone from DNS there, and sends it no other', async () => {
    const dns: FakeDns = { answer: [one, two], calls: 0 };
    const dispatcher = dispatcherOn(dns);
    // Requests that wait for the same resolution all take its first address: one resolves it first.
    expect((await get(dispatcher)).replica).toBe(one);
    const held = [replica(two).nextHanging(), replica(one).nextHanging()];
    const first = get(dispatcher, '/slow?hang');
    const second = get(dispatcher, '/slow?hang');
    await Promise.all(held);

    dns.answer = [one]; // scaled down to one
    expired();
    expect(await spread(dispatcher, 4)).toEqual({ [one]: 4 });
    expect(replica(two).requests).toBe(1); // its own, still held

    replica(two).releaseHanging();
    replica(one).releaseHanging();
    expect((await Promise.all([first, second])).map((answer) => answer.replica)).toEqual([two, one]);
    expect(await spread(dispatcher, 2)).toEqual({ [one]: 2 });
  });

  it('resolves once for the requests that find the answer expired together', async () => {
    const dns: FakeDns = { answer: [one, two], calls: 0 };
    const dispatcher = dispatcherOn(dns);
    const burst = async (): Promise<void> => void (await Promise.all(Array.from({ length: 8 }, () => get(dispatcher))));
    await burst();
    expired();
    await burst();
    expect(dns.calls).toBe(2);
  });

  it('with every address refusing, tries each once and fails with the refusal; serves as soon as one is back', async () => {
    const dispatcher = dispatcherOn({ answer: [one, two], calls: 0 });
    await replica(one).goDown();
    await replica(two).goDown();
    await expect(get(dispatcher)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await replica(two).comeUp();
    expect(await spread(dispatcher, 3)).toEqual({ [two]: 3 });
  });

  it('keeps the last addresses while the name does not resolve, logs that once, and follows it again after', async () => {
    const chunks: string[] = [];
    const log = pino(new Writable({ write: (chunk: Buffer, _encoding, done) => done(void chunks.push(chunk.toString())) }));
    const logged = (): [number, string][] =>
      chunks
        .join('')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { level: number; msg: string })
        .map((line) => [line.level, line.msg]);
    const dns: FakeDns = { answer: [one, two], calls: 0 };
    const dispatcher = dispatcherOn(dns, { log });
    expect(await spread(dispatcher, 2)).toEqual({ [one]: 1, [two]: 1 });
    dns.answer = notFound();
    for (const answer of [notFound(), notFound(), []]) {
      dns.answer = answer;
      expired();
      expect(await spread(dispatcher, 4)).toEqual({ [one]: 2, [two]: 2 });
    }
    expect(dns.calls).toBe(4);

    dns.answer = [three];
    expired();
    expect(await spread(dispatcher, 2)).toEqual({ [three]: 2 });
    expect(logged()).toEqual([
      [30, `upstream web.test resolves to ${one}, ${two}`],
      [40, `cannot resolve upstream web.test: keeping ${one}, ${two}`],
      [30, 'upstream web.test resolves again'],
      [30, `upstream web.test resolves to ${three}`],
    ]);
  });

  it("fails a request with the resolver's error while the name never resolved, and serves once it does", async () => {
    const dns: FakeDns = { answer: notFound(), calls: 0 };
    const dispatcher = dispatcherOn(dns);
    await expect(get(dispatcher)).rejects.toBe(dns.answer);
    dns.answer = [one];
    // A failure is not kept: the next request asks again.
    expect((await get(dispatcher)).replica).toBe(one);
  });

  it.each(['127.0.0.1', 'localhost'])('never resolves an upstream named %s', async (name) => {
    const dns: FakeDns = { answer: notFound(), calls: 0 };
    const origin = `http://${name}:${port}`;
    const dispatcher = dispatcherOn(dns, { upstream: new URL(origin) });
    expect(await spread(dispatcher, 3, origin)).toEqual({ [one]: 3 });
    expired();
    expect(await spread(dispatcher, 3, origin)).toEqual({ [one]: 3 });
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
    const dispatcher = dispatcherOn({ answer: ['::1', one], calls: 0 });
    expect(await spread(dispatcher, 4)).toEqual({ '::1': 2, [one]: 2 });
  });
});
