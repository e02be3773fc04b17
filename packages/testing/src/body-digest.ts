import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** What a test upstream reports of a body it received: enough to compare it, without keeping it. */
export interface BodyDigest {
  bodyLength: number;
  bodySha256: string;
}

/** Reads `request` to its end and calls `done` with its body's length and SHA-256. */
export function digestBody(request: IncomingMessage, done: (digest: BodyDigest) => void): void {
  const hash = createHash('sha256');
  let bodyLength = 0;
  request.on('data', (chunk: Buffer) => {
    bodyLength += chunk.length;
    hash.update(chunk);
  });
  request.on('end', () => done({ bodyLength, bodySha256: hash.digest('hex') }));
}
