/** Test clients: node:http (unlike fetch, it can set Host and send a body chunk by chunk) and a raw socket. */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';

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

/** Sends one request and collects the whole answer; rejects when the connection is cut. */
export function send(baseUrl: string, sent: Sent): Promise<Received> {
  const { method = 'GET', path, headers = {}, body } = sent;
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${baseUrl}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const all = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: all, json: () => JSON.parse(all.toString()) });
      });
    });
    req.on('error', reject);
    if (Array.isArray(body)) for (const chunk of body) req.write(chunk);
    else if (body !== undefined) req.setHeader('content-length', body.length).write(body);
    req.end();
  });
}

/** Writes `head` (request line and headers, without the blank line) as is, with Connection: close, then `body`; resolves with the raw answer. */
export function sendRaw(baseUrl: string, head: string, body = ''): Promise<string> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(`${head}\r\nConnection: close\r\n\r\n${body}`));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}
