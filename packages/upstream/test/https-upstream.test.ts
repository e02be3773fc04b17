import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createServer as createTcpServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { promisify } from 'node:util';
import { pino } from 'pino';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamAddresses } from '../src/upstream-addresses.js';
import { ManualTimers } from '@sample-services/testing/manual-timers';

const name = 'backend-tls.test';

/** What the TLS server saw of one request. */
interface Seen {
  servername: string | false | null;
  host: string | undefined;
  encrypted: boolean;
}

/** A throwaway self-signed certificate for `name`, made by the openssl CLI; undefined without one. */
async function makeCertificate(): Promise<{ key: Buffer; cert: Buffer } | undefined> {
  const dir = await mkdtemp(join(tmpdir(), 'upstream-tls-'));
  try {
    const [key, cert] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
    await promisify(execFile)('openssl', [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1'],
      ...['-keyout', key, '-out', cert, '-subj', `/CN=${name}`, '-addext', `subjectAltName=DNS:${name}`],
    ]);
    return { key: await readFile(key), cert: await readFile(cert) };
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return undefined;
    throw error;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('an https upstream named by a host name', () => {
  let tls: { key: Buffer; cert: Buffer } | undefined;
  const closing: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    tls = await makeCertificate();
  });
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });

  /** The upstream `url`, whose host name resolves to 127.0.0.1, started; its certificate trusted. */
  async function upstreamAt(url: string, ca: Buffer | undefined): Promise<UpstreamAddresses> {
    const addresses = new UpstreamAddresses({
      upstream: new URL(url),
      pool: { connections: 2, connect: { timeout: 5_000, ...(ca === undefined ? {} : { ca }) } },
      resolve: async (hostname) => {
        expect(hostname).toBe(name);
        return ['127.0.0.1'];
      },
      resolveIntervalMs: 1_000,
      skipMs: 1_000,
      log: pino({ enabled: false }),
      timers: new ManualTimers(),
    });
    closing.push(() => addresses.close());
    await addresses.start();
    return addresses;
  }

  async function listening<T extends Server | HttpsServer>(server: T): Promise<number> {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    closing.push(async () => {
      server.close();
      if ('closeAllConnections' in server) server.closeAllConnections();
      await once(server, 'close');
    });
    return (server.address() as AddressInfo).port;
  }

  it('is spoken to over TLS at each address, with the host name for SNI, the certificate check and the Host header', async (context) => {
    if (tls === undefined) {
      // Under CI nothing skips: the machine must have what the test needs.
      if (process.env.CI === 'true') throw new Error('no openssl CLI here to make a test certificate');
      return context.skip('no openssl CLI here to make a test certificate');
    }
    const server = createHttpsServer({ key: tls.key, cert: tls.cert }, (request, response) => {
      const socket = request.socket as TLSSocket;
      const seen: Seen = { servername: socket.servername, host: request.headers.host, encrypted: socket.encrypted };
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(seen));
    });
    const port = await listening(server);
    const addresses = await upstreamAt(`https://${name}:${port}`, tls.cert);
    const target = addresses.pick();
    expect(target?.address).toBe('127.0.0.1');
    const answer = await target?.pool.request({ method: 'GET', path: '/' });
    expect(answer?.statusCode).toBe(200);
    expect(await answer?.body.json()).toEqual({ servername: name, host: `${name}:${port}`, encrypted: true } satisfies Seen);
    // A Host of the caller's own (the proxy passes its client's) goes as it is, but the server name stays the upstream's.
    const passed = await target?.pool.request({ method: 'GET', path: '/', headers: { host: 'shop.example' } });
    expect(await passed?.body.json()).toEqual({ servername: name, host: 'shop.example', encrypted: true } satisfies Seen);
  });

  it('never sends a request in clear text', async () => {
    const received: Buffer[] = [];
    // Takes the first bytes of each connection, then closes it: a TLS handshake fails, a request in clear text shows.
    const listener = createTcpServer((socket: Socket) => {
      socket.once('data', (chunk: Buffer) => {
        received.push(chunk);
        socket.destroy();
      });
    });
    const port = await listening(listener);
    const addresses = await upstreamAt(`https://${name}:${port}`, undefined);
    await expect(addresses.pick()?.pool.request({ method: 'GET', path: '/secret' })).rejects.toThrow();
    expect(received.length).toBeGreaterThan(0);
    for (const chunk of received) {
      expect(chunk.toString('latin1')).not.toContain('/secret');
      expect(chunk[0]).toBe(0x16); // a TLS handshake record: the ClientHello
    }
  });

  it('connects to port 443 when the URL gives none', async () => {
    const addresses = await upstreamAt(`https://${name}`, undefined);
    const failure: unknown = await addresses
      .pick()
      ?.pool.request({ method: 'GET', path: '/' })
      .catch((error: unknown) => error);
    // Nothing listens on 127.0.0.1:443 here: the refusal names the address and port it tried.
    expect(failure).toMatchObject({ code: 'ECONNREFUSED', address: '127.0.0.1', port: 443 });
  });
});
