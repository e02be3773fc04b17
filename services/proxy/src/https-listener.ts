import type { App } from '@sample-services/kit/server';

/**
 * Serves `secure` (the HTTPS app) beside `plain`, the app runService listens with: it listens once `plain`
 * is ready, so that a port it cannot have stops the start-up, takes the same connection limit, starts
 * closing when `plain` does and is closed before `plain`'s close resolves (in-flight requests finish on both).
 */
export function serveBeside(plain: App, secure: App, listen: { port: number; host: string; maxConnections: number }): void {
  secure.server.maxConnections = listen.maxConnections;
  plain.addHook('onReady', async () => {
    try {
      await secure.listen({ port: listen.port, host: listen.host, backlog: 65535 });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      throw new Error(`cannot listen for HTTPS on TLS_PORT ${listen.port} (${code})`, { cause: error });
    }
    const address = secure.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : listen.port;
    // The line's `tlsPort` field is how a test that gave TLS_PORT=0 learns the port.
    plain.log.info({ tlsPort: port }, `HTTPS (HTTP/2 and HTTP/1.1) on port ${port}`);
  });
  let closed: Promise<void> | undefined;
  plain.addHook('preClose', (done) => {
    closed = secure.close();
    done();
  });
  plain.addHook('onClose', async () => {
    await (closed ?? secure.close());
  });
}
