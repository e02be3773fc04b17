/**
 * Test clients: node:http and node:https (unlike fetch, they can set Host and send a body chunk by chunk),
 * a raw socket (plain or TLS), and node:http2 for what HTTP/2 can carry. An https: base URL is reached with
 * only the given authority trusted, as a browser that trusts it would.
 */
import { request as httpRequest, type IncomingHttpHeaders, type RequestOptions } from 'node:http';
import { connect as http2Connect, constants as http2, type IncomingHttpHeaders as Http2Headers } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { checkServerIdentity, connect as tlsConnect, type PeerCertificate } from 'node:tls';

export interface Sent {
  method?: string;
  path: string;
  /** An array value is sent as that many header lines. */
  headers?: Record<string, string | string[]>;
  /** Sent with Content-Length; an array of chunks is sent chunked, without one. */
  body?: Buffer | Buffer[];
}

export interface Received {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  json: () => unknown;
}

/** What an https: base URL needs: the authority (PEM) its certificate must chain to. */
export interface Trust {
  ca: Buffer | string;
}

const received = (status: number, headers: IncomingHttpHeaders, chunks: Buffer[]): Received => {
  const body = Buffer.concat(chunks);
  return { status, headers, body, json: () => JSON.parse(body.toString()) };
};

/** Sends one request (https when the base URL is, trusting `trust.ca`) and collects the whole answer; rejects when the connection is cut. */
export function send(baseUrl: string, sent: Sent, trust?: Trust): Promise<Received> {
  const { method = 'GET', path, headers = {}, body } = sent;
  const secure = baseUrl.startsWith('https:');
  // The certificate is checked against the URL's host, not against a Host header the test sets.
  const hostname = new URL(baseUrl).hostname;
  const tls = {
    ca: trust?.ca,
    agent: false,
    checkServerIdentity: (_: string, cert: PeerCertificate) => checkServerIdentity(hostname, cert),
  };
  const options: RequestOptions = { method, headers, ...(secure ? tls : {}) };
  return new Promise((resolve, reject) => {
    const req = (secure ? httpsRequest : httpRequest)(`${baseUrl}${path}`, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => resolve(received(res.statusCode ?? 0, res.headers, chunks)));
    });
    req.on('error', reject);
    if (Array.isArray(body)) for (const chunk of body) req.write(chunk);
    else if (body !== undefined) req.setHeader('content-length', body.length).write(body);
    req.end();
  });
}

/**
 * Writes `head` (request line and headers, without the blank line) as is, with Connection: close, then `body`;
 * resolves with the raw answer. Over TLS (HTTP/1.1 by ALPN) when the base URL is https.
 */
export function sendRaw(baseUrl: string, head: string, body = '', trust?: Trust): Promise<string> {
  const { hostname, port, protocol } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const request = (): void => void socket.write(`${head}\r\nConnection: close\r\n\r\n${body}`);
    const socket =
      protocol === 'https:'
        ? tlsConnect({ port: Number(port), host: hostname, ca: trust?.ca, ALPNProtocols: ['http/1.1'] }, request)
        : connect(Number(port), hostname, request);
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

/** What an HTTP/2 answer carries beyond `Received`: the protocol ALPN chose, always h2 here. */
export interface ReceivedH2 extends Received {
  alpnProtocol: string | undefined;
}

/**
 * Sends one request over HTTP/2 on a connection of its own (TLS, h2 chosen by ALPN, or the connection fails)
 * and collects the answer; `:authority` comes from a `host` header when one is given. Rejects when the stream is reset.
 */
export function sendH2(baseUrl: string, sent: Sent, trust: Trust): Promise<ReceivedH2> {
  const { method = 'GET', path, headers = {}, body } = sent;
  const { host, ...rest } = headers;
  const session = http2Connect(baseUrl, { ca: trust.ca });
  return new Promise<ReceivedH2>((resolve, reject) => {
    session.on('error', reject);
    const stream = session.request({
      [http2.HTTP2_HEADER_METHOD]: method,
      [http2.HTTP2_HEADER_PATH]: path,
      ...(typeof host === 'string' ? { [http2.HTTP2_HEADER_AUTHORITY]: host } : {}),
      ...(body !== undefined && !Array.isArray(body) ? { 'content-length': String(body.length) } : {}),
      ...rest,
    });
    let head: Http2Headers = {};
    const chunks: Buffer[] = [];
    stream.on('response', (answered) => (head = answered));
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('error', reject);
    stream.on('end', () => {
      const { [http2.HTTP2_HEADER_STATUS]: status, ...answer } = head;
      resolve({ ...received(Number(status), answer, chunks), alpnProtocol: session.alpnProtocol });
    });
    if (Array.isArray(body)) for (const chunk of body) stream.write(chunk);
    stream.end(Array.isArray(body) ? undefined : body);
  }).finally(() => session.close());
}

/** send and sendRaw with one trust: what a contract suite takes, so that it runs over http and https alike. */
export interface Client {
  send: (baseUrl: string, sent: Sent) => Promise<Received>;
  sendRaw: (baseUrl: string, head: string, body?: string) => Promise<string>;
}

export const clientTrusting = (trust?: Trust): Client => ({
  send: (baseUrl, sent) => send(baseUrl, sent, trust),
  sendRaw: (baseUrl, head, body) => sendRaw(baseUrl, head, body, trust),
});
