import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { App } from '@sample-services/kit/server';

/**
 * Per client connection, the requests pipelined behind the one being forwarded, each a callback
 * that lets it go on. A connection is in the map while one of its requests is forwarded.
 */
const waitingBehind = new WeakMap<Socket, (() => void)[]>();

/**
 * The response of the request being forwarded closed (finished or cut): the next one goes, unless
 * the client is gone, whose requests would be forwarded for nobody.
 */
function letNextGo(this: ServerResponse): void {
  const socket = this.req.socket;
  if (socket.destroyed) return void waitingBehind.delete(socket);
  const waiting = waitingBehind.get(socket);
  const next = waiting?.shift();
  if (next !== undefined) next();
  else waitingBehind.delete(socket);
}

/**
 * Node hands every request a client pipelines on one connection to the app at once; forwarded as
 * they come, hundreds would be in flight upstream for one client, and unsafe ones could reach the
 * upstream out of order. As nginx, one request per client connection is forwarded at a time, the
 * next once the answer before it is written: Node writes the answers in order anyway.
 */
export function forwardOneAtATime(app: App): void {
  app.addHook('onRequest', (request, reply, done) => {
    const socket = request.raw.socket;
    const waiting = waitingBehind.get(socket);
    if (waiting === undefined) {
      waitingBehind.set(socket, []);
      reply.raw.on('close', letNextGo);
      done();
      return;
    }
    waiting.push(() => {
      reply.raw.on('close', letNextGo);
      done();
    });
  });
}
