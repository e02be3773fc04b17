import { createServer, type IncomingHttpHeaders } from 'node:http';
import { digestBody, type BodyDigest } from './body-digest.js';
import { HeldAnswers } from './held-answers.js';
import { listenSwitchable } from './switchable-server.js';

/**
 * `web` scaled to several containers is one port at several addresses: here 127.0.0.1 to .4 (Linux
 * routes all of 127.0.0.0/8 to the loopback interface), and a resolver the test answers for, in
 * place of Docker's DNS.
 */
export const replicaAddresses = ['127.0.0.1', '127.0.0.2', '127.0.0.3', '127.0.0.4'] as const;

/** What the fake DNS answers for `web.test` now, addresses or an error, and how often it was asked. */
export interface FakeDns {
  answer: string[] | Error;
  calls: number;
}

/** The resolver of a fake DNS: the answer of now, for `web.test` only. */
export const resolveWith =
  (dns: FakeDns) =>
  async (hostname: string): Promise<string[]> => {
    if (hostname !== 'web.test') throw new Error(`the fake DNS knows web.test only, not ${hostname}`);
    dns.calls += 1;
    if (dns.answer instanceof Error) throw dns.answer;
    return dns.answer;
  };

/** The error getaddrinfo gives for a name it cannot resolve now. */
export const notFound = (): Error => Object.assign(new Error('getaddrinfo EAI_AGAIN web.test'), { code: 'EAI_AGAIN' });

/** What a replica answers: which replica, and the request as it arrived there. */
export interface ReplicaAnswer extends BodyDigest {
  replica: string;
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

/** One replica of a scaled service: an HTTP server on its own loopback address, the port shared by all. */
export interface Replica {
  /** Its address, e.g. 127.0.0.2, as a DNS answer would list it. */
  readonly address: string;
  readonly port: number;
  /** Requests that reached it so far. */
  readonly requests: number;
  /** TCP connections opened to it so far. */
  readonly connections: number;
  /** TCP connections open now. */
  readonly openConnections: number;
  /** While true, it reads each request whole, then closes the connection without an answer. */
  resetting: boolean;
  /** Does the same to the next `count` requests only. */
  dropNext: (count: number) => void;
  /** Resolves when the next request with `?hang` arrived here and is held. */
  nextHanging: () => Promise<void>;
  /** Answers every request held here. */
  releaseHanging: () => void;
  /** Stops listening and drops its connections: connecting now fails with ECONNREFUSED. */
  goDown: () => Promise<void>;
  /** Listens again on its address and port. */
  comeUp: () => Promise<void>;
  close: () => Promise<void>;
}

/**
 * A replica on `address` (any of Linux's 127.0.0.0/8, which all reach the loopback interface)
 * and `port` (0: any free one). It answers every request with a JSON ReplicaAnswer; `?hang`
 * holds the answer until releaseHanging().
 */
export async function startReplica(address: string, port = 0): Promise<Replica> {
  let requests = 0;
  const held = new HeldAnswers();
  const state = { resetting: false, drops: 0 };

  const server = createServer((request, response) => {
    requests += 1;
    digestBody(request, (digest) => {
      if (state.resetting) return void request.socket.destroy();
      if (state.drops > 0) {
        state.drops -= 1;
        return void request.socket.destroy();
      }
      const answer: ReplicaAnswer = {
        replica: address,
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        ...digest,
      };
      const send = (): void => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(request.method === 'HEAD' ? undefined : JSON.stringify(answer));
      };
      if (!(request.url ?? '').includes('hang')) return send();
      held.hold(send);
    });
  });
  const listening = await listenSwitchable(server, address, port);
  const { goDown } = listening;
  return {
    address,
    port: listening.port,
    get requests() {
      return requests;
    },
    get connections() {
      return listening.connections;
    },
    get openConnections() {
      return listening.open;
    },
    get resetting() {
      return state.resetting;
    },
    set resetting(value: boolean) {
      state.resetting = value;
    },
    dropNext: (count) => {
      state.drops = count;
    },
    nextHanging: held.next,
    releaseHanging: held.releaseAll,
    goDown,
    comeUp: listening.comeUp,
    close: async () => {
      held.drop();
      await goDown();
    },
  };
}

/**
 * Replicas on the given loopback addresses, all on one port, as `web` scaled to several
 * containers answers on one port at several addresses. A port taken on one of the addresses
 * is given up for another.
 */
export async function startReplicas(addresses: readonly string[]): Promise<Replica[]> {
  for (let attempt = 1; ; attempt += 1) {
    const [first, ...others] = addresses;
    if (first === undefined) return [];
    const started = [await startReplica(first)];
    try {
      for (const address of others) started.push(await startReplica(address, started[0]?.port));
      return started;
    } catch (error) {
      await Promise.all(started.map((replica) => replica.close()));
      if ((error as { code?: unknown }).code !== 'EADDRINUSE' || attempt === 5) throw error;
    }
  }
}
