import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { digestBody, type BodyDigest } from './body-digest.js';
import { HeldAnswers } from './held-answers.js';
import { listenSwitchable } from './switchable-server.js';

/** What the echo upstream answers: the request exactly as it arrived there. */
export interface EchoedRequest extends BodyDigest {
  method: string;
  /** Path and query string. */
  url: string;
  headers: IncomingHttpHeaders;
}

export interface EchoUpstream {
  port: number;
  url: string;
  /** TCP connections opened to it so far (keep-alive reuse opens none). */
  readonly connections: number;
  /** Requests that reached it so far. */
  readonly requests: number;
  /** Held `?hang` requests whose connection closed before they were answered. */
  readonly abandoned: number;
  /** Resolves when the next request with `?hang` has arrived and is being held. */
  nextHanging: () => Promise<void>;
  /** Answers every held `?hang` request normally. */
  releaseHanging: () => void;
  /** Stops listening and drops every connection: calls now fail with ECONNREFUSED. */
  goDown: () => Promise<void>;
  /** Listens again on the same port. */
  comeUp: () => Promise<void>;
  close: () => Promise<void>;
}

/** The body `download=N` answers: N bytes of a repeating pattern, cheap to check. */
export function downloadBody(size: number): Buffer {
  return Buffer.alloc(size, 'abcdefghijklmnopqrstuvwxyz0123456789');
}

function sendDownload(response: ServerResponse, size: number, cut: boolean, sized: boolean): void {
  const body = downloadBody(size);
  // Chunked unless `sized`, so that a cut body cannot be told from a whole one by its length alone.
  response.writeHead(
    200,
    sized ? { 'content-type': 'application/octet-stream', 'content-length': size } : { 'content-type': 'application/octet-stream' },
  );
  if (!cut) return void response.end(body);
  response.write(body.subarray(0, size / 2), () => response.destroy());
}

/**
 * An HTTP server on an ephemeral 127.0.0.1 port that answers every request with a JSON
 * EchoedRequest. The query steers it: `status=418` sets the status, `cookies=2` sends that
 * many Set-Cookie headers, `hang` holds the request until releaseHanging(), `reset`
 * destroys the socket instead of answering, `download=N` answers N bytes of
 * downloadBody(N) instead (chunked; `sized` declares its Content-Length), `cut` destroys the
 * socket halfway through that body, and
 * `early` sends a 103 Early Hints before the answer.
 */
export async function startEchoUpstream(): Promise<EchoUpstream> {
  let requests = 0;
  let abandoned = 0;
  const held = new HeldAnswers();

  const server = createServer((request, response: ServerResponse) => {
    requests += 1;
    digestBody(request, (digest) => {
      const query = new URL(request.url ?? '/', 'http://upstream').searchParams;
      if (query.has('reset')) return void request.socket.destroy();
      if (query.has('download')) return sendDownload(response, Number(query.get('download')), query.has('cut'), query.has('sized'));
      const echoed: EchoedRequest = {
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        ...digest,
      };
      const answer = (): void => {
        const cookies = Array.from({ length: Number(query.get('cookies') ?? 0) }, (_, i) => `c${i + 1}=v${i + 1}; Path=/`);
        if (cookies.length > 0) response.setHeader('set-cookie', cookies);
        response.setHeader('x-echo', 'yes');
        response.writeHead(Number(query.get('status') ?? 200), { 'content-type': 'application/json' });
        response.end(request.method === 'HEAD' ? undefined : JSON.stringify(echoed));
      };
      if (query.has('early')) response.writeEarlyHints({ link: '</style.css>; rel=preload; as=style' });
      if (!query.has('hang')) return answer();
      response.on('close', () => {
        if (!response.writableEnded) abandoned += 1;
      });
      held.hold(answer);
    });
  });
  const listening = await listenSwitchable(server, '127.0.0.1');
  const { port, goDown } = listening;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    get connections() {
      return listening.connections;
    },
    get requests() {
      return requests;
    },
    get abandoned() {
      return abandoned;
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
