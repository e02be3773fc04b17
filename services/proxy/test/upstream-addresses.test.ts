import { setTimeout as sleep } from 'node:timers/promises';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { send, type Received, type Sent } from '@svc/testing/http-request';
import { startReplica, startReplicas, type Replica, type ReplicaAnswer } from '@svc/testing/loopback-replicas';
import { createProxyApp, type ProxyAppOptions } from '../src/app.js';

// `web` scaled to several containers is one port at several addresses: here 127.0.0.1 to .4
// (Linux routes all of 127.0.0.0/8 to the loopback interface), one port, and a resolver the test
// answers for, in place of Docker's DNS.
const [one, two, three, four] = ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4'] as const;
const RESOLVE_MS = 50;

/** What the fake DNS answers now: addresses, or an error. */
interface Dns {
  answer: string[] | Error;
  calls: number;
}

const notFound = (): Error => Object.assign(new Error('getaddrinfo EAI_AGAIN web.test'), { code: 'EAI_AGAIN' });

describe('the proxy follows the addresses of its upstream host name', () => {
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

  async function startProxy(dns: Dns, options: Partial<ProxyAppOptions> = {}): Promise<string> {
    const app = createProxyApp({
      logger: false,
      upstream: new URL(`http://web.test:${port}`),
      maxConnections: 64,
      upstreamTimeoutMs: 2_000,
      resolveIntervalMs: RESOLVE_MS,
      resolve: async (hostname) => {
        expect(hostname).toBe('web.test');
        dns.calls += 1;
        if (dns.answer instanceof Error) throw dns.answer;
        return dns.answer;
      },
      ...options,
    });
    apps.push(app);
    return app.listen({ port: 0, host: '127.0.0.1' });
  }

  /** Resolves once the proxy asked the DNS twice more: the answer of now is in use. */
  async function resolvedAgain(dns: Dns): Promise<void> {
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

  it('spreads requests over every address in turn, each on kept-alive connections, with the Host header unchanged', async () => {
    const baseUrl = await startProxy({ answer: [one, two, three], calls: 0 });
    const hosts = new Set<unknown>();
    const counts: Record<string, number> = {};
    for (let i = 0; i < 30; i += 1) {
      const res = await send(baseUrl, { path: `/r/${i}`, headers: { host: 'shop.example' } });
      const answer = res.json() as ReplicaAnswer;
      counts[answer.replica] = (counts[answer.replica] ?? 0) + 1;
      hosts.add(answer.headers.host);
    }
    expect(counts).toEqual({ [one]: 10, [two]: 10, [three]: 10 });
    expect([...hosts]).toEqual(['shop.example']);
    // One connection each, reused: a keep-alive pool per address.
    expect([one, two, three].map((a) => replica(a).connections)).toEqual([1, 1, 1]);
    expect(replica(four).requests).toBe(0);
  });

  it('sends traffic to a new address after the next resolution, without a restart', async () => {
    const dns: Dns = { answer: [one, two], calls: 0 };
    const baseUrl = await startProxy(dns);
    expect(await spread(baseUrl, 4)).toEqual({ [one]: 2, [two]: 2 });
    dns.answer = [one, two, three]; // docker compose up --scale web=3
    await resolvedAgain(dns);
    expect(await spread(baseUrl, 9)).toEqual({ [one]: 3, [two]: 3, [three]: 3 });
  });

  it('closes the pool of an address gone from DNS once its requests in flight finished', async () => {
    const dns: Dns = { answer: [one, two], calls: 0 };
    const baseUrl = await startProxy(dns);
    const held = [replica(one).nextHanging(), replica(two).nextHanging()];
    const first = send(baseUrl, { path: '/slow?hang' });
    const second = send(baseUrl, { path: '/slow?hang' });
    await Promise.all(held);

    dns.answer = [one]; // scaled down to one
    await resolvedAgain(dns);
    expect(await spread(baseUrl, 4)).toEqual({ [one]: 4 });
    expect(replica(two).openConnections).toBe(1); // still serving its request

    replica(two).releaseHanging();
    replica(one).releaseHanging();
    const answers = await Promise.all([first, second]);
    expect(answers.map((res) => [res.status, (res.json() as ReplicaAnswer).replica])).toEqual([
      [200, one],
      [200, two],
    ]);
    // Then its pool closes its connection; the remaining address keeps its own.
    await expect.poll(() => replica(two).openConnections, { timeout: 5_000 }).toBe(0);
    expect(replica(one).openConnections).toBeGreaterThan(0);
  });

  it('loses no GET under load while an address goes down, one comes up and one is scaled away', async () => {
    const dns: Dns = { answer: [one, two, three], calls: 0 };
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
    const loops = [0, 1, 2, 3].map(loop);
    await sleep(400);
    const before = replica(two).requests;
    await replica(two).goDown(); // crashed, still in DNS: connection refused
    await sleep(400);
    await replica(four).comeUp(); // a new replica
    dns.answer = [one, two, three, four];
    await sleep(400);
    dns.answer = [one, two, four]; // scaled away: gone from DNS, then stopped
    await sleep(200);
    await replica(three).goDown();
    await sleep(600);
    stop = true;
    await Promise.all(loops);

    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThan(200);
    expect(before).toBeGreaterThan(0);
    expect(replica(four).requests).toBeGreaterThan(0);
    expect(replica(one).requests).toBeGreaterThan(replica(four).requests);
  });

  it('sends a request that never went out (refused) to another address, POST and its body included', async () => {
    const dns: Dns = { answer: [one, two], calls: 0 };
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

  it('passes over an address that failed to connect for a while, then tries it again', async () => {
    const baseUrl = await startProxy({ answer: [one, two], calls: 0 }, { skipFailedMs: 1_000 });
    await replica(two).goDown();
    expect(await spread(baseUrl, 2)).toEqual({ [one]: 2 }); // the second was refused by .2, then sent to .1
    await replica(two).comeUp();
    expect(await spread(baseUrl, 6)).toEqual({ [one]: 6 });
    await sleep(1_100);
    expect(await spread(baseUrl, 6)).toEqual({ [one]: 3, [two]: 3 });
  });

  it('passes over a refused address (a replica still starting) for 1 s only, not the whole skip time', async () => {
    const baseUrl = await startProxy({ answer: [one, two], calls: 0 }, { skipFailedMs: 10_000 });
    await replica(two).goDown();
    expect(await spread(baseUrl, 2)).toEqual({ [one]: 2 }); // refused by .2, then sent to .1
    await replica(two).comeUp();
    expect(await spread(baseUrl, 4)).toEqual({ [one]: 4 });
    await sleep(1_100);
    expect(await spread(baseUrl, 4)).toEqual({ [one]: 2, [two]: 2 });
  });

  it('keeps the last addresses while the name does not resolve, logs that once, and follows it again after', async () => {
    const chunks: string[] = [];
    const logger = pino(new Writable({ write: (chunk: Buffer, _encoding, done) => done(void chunks.push(chunk.toString())) }));
    const logged = (): { level: number; msg: string }[] =>
      chunks
        .join('')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { level: number; msg: string })
        .filter((line) => line.msg.includes('web.test'));
    const dns: Dns = { answer: [one, two], calls: 0 };
    const baseUrl = await startProxy(dns, { logger });
    dns.answer = notFound();
    await resolvedAgain(dns);
    await resolvedAgain(dns);
    expect(await spread(baseUrl, 4)).toEqual({ [one]: 2, [two]: 2 });
    dns.answer = [];
    await resolvedAgain(dns);
    expect(await spread(baseUrl, 4)).toEqual({ [one]: 2, [two]: 2 });

    dns.answer = [three];
    await resolvedAgain(dns);
    expect(await spread(baseUrl, 2)).toEqual({ [three]: 2 });
    expect(logged().map((line) => [line.level, line.msg])).toEqual([
      [30, `upstream web.test resolves to ${one}, ${two}`],
      [40, `cannot resolve upstream web.test: keeping ${one}, ${two}`],
      [30, 'upstream web.test resolves again'],
      [30, `upstream web.test resolves to ${three}`],
    ]);
  });

  it('starts while the name does not resolve yet: 502 JSON until it does, then serves', async () => {
    const dns: Dns = { answer: notFound(), calls: 0 };
    const baseUrl = await startProxy(dns);
    expectBadGateway(await send(baseUrl, { path: '/' }));
    dns.answer = [one];
    await resolvedAgain(dns);
    expect(await servedBy(baseUrl)).toBe(one);
  });

  it.each(['127.0.0.1', 'localhost'])('never resolves an upstream named %s', async (name) => {
    const dns: Dns = { answer: notFound(), calls: 0 };
    const baseUrl = await startProxy(dns, { upstream: new URL(`http://${name}:${port}`) });
    expect(await spread(baseUrl, 3)).toEqual({ [one]: 3 });
    await sleep(3 * RESOLVE_MS);
    expect(dns.calls).toBe(0);
  });

  it('connects to an IPv6 address in brackets', async (context) => {
    let v6: Replica;
    try {
      v6 = await startReplica('::1', port);
    } catch (error) {
      return context.skip(`no IPv6 loopback here: ${String(error)}`);
    }
    replicas.push(v6);
    const baseUrl = await startProxy({ answer: ['::1', one], calls: 0 });
    expect(await spread(baseUrl, 4)).toEqual({ '::1': 2, [one]: 2 });
  });
});
