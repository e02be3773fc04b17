import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { send, type Received, type Sent } from '@sample-services/testing/http-request';
import {
  notFound,
  replicaAddresses,
  resolveWith,
  startReplicas,
  type FakeDns,
  type Replica,
  type ReplicaAnswer,
} from '@sample-services/testing/loopback-replicas';
import { createProxyApp, type ProxyAppOptions } from '../src/app.js';

// `web` scaled to several containers (replicaAddresses), with a fake DNS. How the addresses are followed is @sample-services/upstream's
// (packages/upstream/test/upstream-addresses.test.ts); here, what the proxy does with them.
// The resolve loop runs on real timers: the tests wait for what it did, never for a time.
const [one, two, three, four] = replicaAddresses;
const RESOLVE_MS = 50;

describe('the proxy over the addresses of its upstream: failed requests sent to another, 502 when none answers', () => {
  let replicas: Replica[];
  let port: number;
  const apps: FastifyInstance[] = [];

  beforeEach(async () => {
    replicas = await startReplicas([one, two, three, four]);
    port = (replicas[0] as Replica).port;
  });
  afterEach(async () => {
    for (const replica of replicas) replica.releaseHanging();
    await Promise.all(apps.splice(0).map((app) => app.close()));
    await Promise.all(replicas.map((replica) => replica.close()));
  });

  const replica = (address: string): Replica => replicas.find((r) => r.address === address) as Replica;

  async function startProxy(dns: FakeDns, options: Partial<ProxyAppOptions> = {}): Promise<string> {
    const app = createProxyApp({
      logger: false,
      upstream: new URL(`http://web.test:${port}`),
      maxConnections: 64,
      upstreamTimeoutMs: 2_000,
      resolveIntervalMs: RESOLVE_MS,
      resolve: resolveWith(dns),
      ...options,
    });
    apps.push(app);
    return app.listen({ port: 0, host: '127.0.0.1' });
  }

  /** Resolves once the proxy asked the DNS twice more: the answer of now is in use. */
  async function resolvedAgain(dns: FakeDns): Promise<void> {
    const calls = dns.calls;
    await expect.poll(() => dns.calls, { timeout: 5_000, interval: 10 }).toBeGreaterThanOrEqual(calls + 2);
  }

  /** The replica that answered a request, which must succeed. */
  async function servedBy(baseUrl: string, sent: Sent = { path: '/' }): Promise<string> {
    const res = await send(baseUrl, sent);
    expect(res.status, res.body.toString()).toBe(200);
    return (res.json() as ReplicaAnswer).replica;
  }

  /** How many of `count` requests, sent one after the other, each replica answered. */
  async function spread(baseUrl: string, count: number, sent: Sent = { path: '/' }): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (let i = 0; i < count; i += 1) {
      const by = await servedBy(baseUrl, sent);
      counts[by] = (counts[by] ?? 0) + 1;
    }
    return counts;
  }

  function expectBadGateway(res: Received): void {
    expect(res.status).toBe(502);
    expect(res.json()).toEqual({ error: 'Bad gateway: upstream unavailable' });
  }

  it("passes the client's Host header on to every address, not the upstream's name", async () => {
    const baseUrl = await startProxy({ answer: [one, two, three], calls: 0 });
    const hosts = new Set<unknown>();
    const replicasSeen = new Set<string>();
    for (let i = 0; i < 6; i += 1) {
      const answer = (await send(baseUrl, { path: `/r/${i}`, headers: { host: 'shop.example' } })).json() as ReplicaAnswer;
      replicasSeen.add(answer.replica);
      hosts.add(answer.headers.host);
    }
    expect([...replicasSeen].sort()).toEqual([one, two, three]);
    expect([...hosts]).toEqual(['shop.example']);
  });

  it('sends a request that never went out (refused) to another address, POST and its body included', async () => {
    const dns: FakeDns = { answer: [one, two], calls: 0 };
    const baseUrl = await startProxy(dns);
    await replica(two).goDown();
    const body = Buffer.from('{"name":"Ada","email":"ada@example.org"}');
    for (const sent of [
      { method: 'POST', path: '/api/users', body },
      { method: 'POST', path: '/api/users', body },
      { method: 'PATCH', path: '/api/users/1', body: [body.subarray(0, 10), body.subarray(10)] },
      { method: 'GET', path: '/' },
    ]) {
      const res = await send(baseUrl, sent);
      expect(res.status).toBe(200);
      const answer = res.json() as ReplicaAnswer;
      expect([answer.replica, answer.method, answer.bodyLength]).toEqual([one, sent.method, sent.method === 'GET' ? 0 : body.length]);
    }
    expect(replica(one).requests).toBe(4);
  });

  it('sends a request the upstream dropped unanswered to another address only when it is idempotent and bodiless', async () => {
    const baseUrl = await startProxy({ answer: [one, two], calls: 0 });
    replica(two).resetting = true; // reads each request, then closes the connection without an answer
    const body = Buffer.from('{"x":1}');
    // Requests alternate: .1, .2, .1, .2... The ones that reached .2:
    const statuses: Record<string, number[]> = {};
    for (const sent of [
      { method: 'GET', path: '/' },
      { method: 'GET', path: '/' },
      { method: 'DELETE', path: '/x' },
      { method: 'DELETE', path: '/x' },
      { method: 'PUT', path: '/x' },
      { method: 'PUT', path: '/x' },
      { method: 'POST', path: '/x' },
      { method: 'POST', path: '/x' },
      { method: 'POST', path: '/x', body },
      { method: 'POST', path: '/x', body },
      { method: 'PUT', path: '/x', body },
      { method: 'PUT', path: '/x', body },
    ] satisfies Sent[]) {
      const res = await send(baseUrl, sent);
      (statuses[`${sent.method}${sent.body ? ' with a body' : ''}`] ??= []).push(res.status);
      if (res.status === 502) expectBadGateway(res);
    }
    expect(statuses).toEqual({
      GET: [200, 200],
      DELETE: [200, 200],
      PUT: [200, 200],
      // Sent, perhaps acted on: not sent twice.
      POST: [200, 502],
      'POST with a body': [200, 502],
      'PUT with a body': [200, 502],
    });
    // .2 got 6 requests; the bodiless idempotent ones (3) went on to .1: 6 + 3.
    expect([replica(one).requests, replica(two).requests]).toEqual([9, 6]);
  });

  it('tries a lost idempotent request once more on the same address when no other is left, as nginx does a kept-alive one', async () => {
    const baseUrl = await startProxy({ answer: [one], calls: 0 });
    replica(one).dropNext(1);
    expect(await servedBy(baseUrl)).toBe(one);
    expect(replica(one).requests).toBe(2);
    // Once only: dropped twice, it is a 502.
    replica(one).dropNext(2);
    expectBadGateway(await send(baseUrl, { path: '/' }));
    expect(replica(one).requests).toBe(4);
    // A POST that went out may have been acted on: never sent twice.
    replica(one).dropNext(1);
    expectBadGateway(await send(baseUrl, { method: 'POST', path: '/x' }));
    expect(replica(one).requests).toBe(5);
  });

  it('answers 502 JSON when every address fails, and serves again as soon as one is back', async () => {
    const baseUrl = await startProxy({ answer: [one, two], calls: 0 });
    await replica(one).goDown();
    await replica(two).goDown();
    expectBadGateway(await send(baseUrl, { path: '/' }));
    expectBadGateway(await send(baseUrl, { method: 'POST', path: '/x', body: Buffer.from('{}') }));
    // Both are passed over now, but with none left, each is tried anyway.
    await replica(two).comeUp();
    expect(await spread(baseUrl, 3)).toEqual({ [two]: 3 });
  });

  it('starts while the name does not resolve yet: 502 JSON until it does, then serves', async () => {
    const dns: FakeDns = { answer: notFound(), calls: 0 };
    const baseUrl = await startProxy(dns);
    expectBadGateway(await send(baseUrl, { path: '/' }));
    dns.answer = [one];
    await resolvedAgain(dns);
    expect(await servedBy(baseUrl)).toBe(one);
  });

  it('loses no GET under load while an address goes down, one comes up and one is scaled away', async () => {
    const dns: FakeDns = { answer: [one, two, three], calls: 0 };
    await replica(four).goDown(); // not started yet
    const baseUrl = await startProxy(dns);
    const failures: string[] = [];
    let sent = 0;
    let stop = false;
    const loop = async (client: number): Promise<void> => {
      for (let i = 0; !stop; i += 1) {
        sent += 1;
        try {
          const res = await send(baseUrl, { path: `/load/${client}/${i}` });
          if (res.status !== 200) failures.push(`${res.status} ${res.body.toString()}`);
        } catch (error) {
          failures.push(String(error));
        }
      }
    };
    /** Resolves once `count` more requests were sent. */
    const sentMore = async (count: number): Promise<void> => {
      const from = sent;
      await expect.poll(() => sent, { timeout: 10_000, interval: 10 }).toBeGreaterThanOrEqual(from + count);
    };
    const loops = [0, 1, 2, 3].map(loop);
    await sentMore(50);
    const before = replica(two).requests;
    await replica(two).goDown(); // crashed, still in DNS: connection refused
    await sentMore(50);
    await replica(four).comeUp(); // a new replica
    dns.answer = [one, two, three, four];
    await expect.poll(() => replica(four).requests, { timeout: 10_000, interval: 10 }).toBeGreaterThan(0);
    dns.answer = [one, two, four]; // scaled away: gone from DNS, then stopped
    await resolvedAgain(dns);
    await replica(three).goDown();
    await sentMore(50);
    await expect.poll(() => sent, { timeout: 10_000, interval: 10 }).toBeGreaterThan(200);
    stop = true;
    await Promise.all(loops);

    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThan(200);
    expect(before).toBeGreaterThan(0);
    expect(replica(four).requests).toBeGreaterThan(0);
    expect(replica(one).requests).toBeGreaterThan(replica(four).requests);
  });
});
