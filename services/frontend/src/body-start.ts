import type { Readable } from 'node:stream';

/**
 * Resolves once the body's first bytes are in, or once it ended empty; rejects when it fails first.
 * Until then the frontend has sent nothing, so a backend that fails this early still gets its
 * client a clean 500. The first chunk is put back and the body left paused, whole, for its reader.
 */
export function bodyStarted(body: Readable): Promise<void> {
  return new Promise((resolve, reject) => {
    const settle = (error?: Error): void => {
      body.off('data', onData).off('end', onEnd).off('error', onError);
      if (error === undefined) resolve();
      else reject(error);
    };
    const onData = (chunk: Buffer): void => {
      body.pause();
      body.unshift(chunk);
      settle();
    };
    const onEnd = (): void => settle();
    const onError = (error: Error): void => settle(error);
    body.on('data', onData).on('end', onEnd).on('error', onError);
  });
}

/** The start of a body, at most `max` characters: what a failed answer said, for the log. */
export async function opening(body: Readable, max = 200): Promise<string> {
  let text = '';
  body.setEncoding('utf8');
  try {
    for await (const chunk of body as AsyncIterable<string>) {
      text += chunk;
      if (text.length >= max) break; // leaving the loop destroys the body: the rest is not read
    }
  } catch {
    // Only for the log: what came before the failure is all there is to say.
  }
  return text.slice(0, max);
}
