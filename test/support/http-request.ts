/** A test client on node:http: unlike fetch, it can set Host and send a chunked body chunk by chunk. */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

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
