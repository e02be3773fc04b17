import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Agent, interceptors, type Dispatcher } from 'undici';
import { nextUpstream } from './next-upstream.js';

/** The lines this writes, as pino (and so Fastify's logger) takes them. */
export interface UpstreamLog {
  info(message: string): void;
  warn(details: object, message: string): void;
}

/** The addresses a host name resolves to now; rejects when it cannot be resolved. */
export type Resolve = (hostname: string) => Promise<readonly string[]>;

/**
 * getaddrinfo, as every other program on the host and as the connect of a name did before:
 * /etc/hosts (Docker's extra_hosts, Kubernetes' hostAliases), the resolv.conf search domains
 * and Docker's embedded DNS, IPv4 and IPv6 in one call. It gives no TTL, but Docker's DNS
 * answers 600 s, which is no use here: the interval decides, as nginx's `resolver valid=`.
 */
const lookupAll: Resolve = async (hostname) => (await lookup(hostname, { all: true })).map((found) => found.address);

export interface UpstreamDispatcherOptions {
  /** The configured origin, e.g. http://web:3000 or https://web.example:8443: every request's `origin`. */
  upstream: URL;
  /** undici's Agent options, for the keep-alive pool it keeps per address: connections, timeouts, `connect` (e.g. `ca`). */
  agent: Agent.Options;
  /** Default getaddrinfo (every address). */
  resolve?: Resolve | undefined;
  /** How old an answer may grow before the name is resolved again (nginx's `resolver valid=`). */
  resolveIntervalMs: number;
  /** The most attempts of one request (see nextUpstream). */
  attempts?: number | undefined;
  /** Told the error of each attempt that is sent again, e.g. to count it. */
  onRetry?: ((error: Error) => void) | undefined;
  log: UpstreamLog;
}

/**
 * undici's Agent composed with its dns interceptor, so that requests to the upstream's name follow it
 * as it resolves over time (`docker compose up --scale web=3`, a recreated `web`): the answer is kept
 * `resolveIntervalMs`, then the next request resolves it again; requests go round robin over its
 * addresses, each with its own keep-alive pool (the Agent's, closed once its connections are); Host,
 * the TLS server name and the certificate check stay the configured name. Under it, nextUpstream sends
 * a failed request to another address. An upstream named by an IP address or `localhost` is never
 * resolved: one pool (Node's connect tries both of localhost's addresses).
 */
export function upstreamDispatcher(options: UpstreamDispatcherOptions): Dispatcher {
  const { upstream, attempts, onRetry } = options;
  const agent = new Agent(options.agent);
  const hostname = upstream.hostname.startsWith('[') ? upstream.hostname.slice(1, -1) : upstream.hostname;
  if (isIP(hostname) !== 0 || hostname === 'localhost') {
    const origins = [upstream.origin];
    return agent.compose(nextUpstream({ origins: () => origins, attempts, onRetry }));
  }
  const name = followedName(hostname, options);
  return agent.compose(
    nextUpstream({ origins: name.origins, attempts, onRetry }),
    interceptors.dns({ maxTTL: options.resolveIntervalMs, lookup: name.lookup }),
  );
}

/** The `lookup` option of undici's dns interceptor. */
type DnsLookup = NonNullable<NonNullable<Parameters<typeof interceptors.dns>[0]>['lookup']>;

/**
 * The dns interceptor's lookup. Hand-written for what undici's default lookup does not do: when the
 * name fails to resolve, the last addresses stay in use (logged once per outage), and requests that
 * find the answer expired together share one resolution, never piling lookups up on libuv's threads.
 */
function followedName(hostname: string, options: UpstreamDispatcherOptions): { lookup: DnsLookup; origins: () => readonly string[] } {
  const { upstream, log, resolveIntervalMs: ttl } = options;
  const resolve = options.resolve ?? lookupAll;
  const port = upstream.port === '' ? '' : `:${upstream.port}`;
  let addresses: readonly string[] = [];
  let origins: readonly string[] = [];
  let failing = false;
  let resolving: Promise<readonly string[]> | undefined;

  async function resolveAgain(): Promise<readonly string[]> {
    try {
      const found = await resolve(hostname);
      if (found.length === 0) throw new Error(`${hostname} resolved to no address`);
      if (failing) log.info(`upstream ${hostname} resolves again`);
      failing = false;
      if (found.length !== addresses.length || found.some((address) => !addresses.includes(address))) {
        addresses = found;
        // As the dns interceptor writes each address's origin, for nextUpstream to compare.
        origins = found.map((address) => new URL(`${upstream.protocol}//${isIP(address) === 6 ? `[${address}]` : address}${port}`).origin);
        log.info(`upstream ${hostname} resolves to ${addresses.join(', ')}`);
      }
    } catch (error) {
      if (!failing) {
        const kept = addresses.length === 0 ? 'no address to use yet' : `keeping ${addresses.join(', ')}`;
        log.warn({ err: error }, `cannot resolve upstream ${hostname}: ${kept}`);
      }
      failing = true;
      if (addresses.length === 0) throw error;
    }
    return addresses;
  }

  const lookup: DnsLookup = (_origin, _options, callback) => {
    resolving ??= resolveAgain().finally(() => (resolving = undefined));
    resolving.then(
      // Fresh records each time: the interceptor writes its timestamps into them.
      (found) =>
        callback(
          null,
          found.map((address) => ({ address, family: isIP(address) === 6 ? 6 : 4, ttl })),
        ),
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), []),
    );
  };
  return { lookup, origins: () => origins };
}
