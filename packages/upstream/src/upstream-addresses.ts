import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { buildConnector, Pool } from 'undici';
import { codeOf } from './upstream-errors.js';

/** The lines this writes, as pino (and so Fastify's logger) takes them. */
export interface UpstreamLog {
  info(message: string): void;
  warn(message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

/** The addresses a host name resolves to now; rejects when it cannot be resolved. */
export type Resolve = (hostname: string) => Promise<readonly string[]>;

/**
 * getaddrinfo, as every other program on the host and as the connect of a name did before:
 * /etc/hosts (Docker's extra_hosts, Kubernetes' hostAliases), the resolv.conf search domains
 * and Docker's embedded DNS, IPv4 and IPv6 in one call. It gives no TTL, but Docker's DNS
 * answers 600 s, which is no use here: the interval decides, as nginx's `resolver valid=`.
 */
export const lookupAll: Resolve = async (hostname) => (await lookup(hostname, { all: true })).map((found) => found.address);

/**
 * A refused connect costs nothing (the host answers at once) and most often means a replica that
 * is still starting, or stopping: such an address rests only this long, so that a new replica
 * takes traffic about a second after it listens instead of after the full skip.
 */
const REFUSED_SKIP_MS = 1_000;

/** One address of the upstream and its own keep-alive pool. */
export interface UpstreamAddress {
  /** The IP address, or for an upstream named by IP or `localhost`, that name. */
  readonly address: string;
  /** A pool on the configured origin (its Host header, TLS server name and certificate check) that connects to `address`. */
  readonly pool: Pool;
  /** Failed to connect lately: other addresses are preferred until `skipTimer` fires. */
  skipped: boolean;
  skipTimer: unknown;
}

/**
 * The timers of resolving again and of passing an address over: Node's, unref'd, unless a test
 * gives a clock of its own. What `set` returns is only ever given back to `clear`.
 */
export interface UpstreamTimers {
  set(callback: () => void, ms: number): unknown;
  clear(timer: unknown): void;
}

const nodeTimers: UpstreamTimers = {
  set: (callback, ms) => setTimeout(callback, ms).unref(),
  clear: (timer) => clearTimeout(timer as NodeJS.Timeout | undefined),
};

/**
 * Each address's pool, but how to connect comes in `connect` only (undici's connector options:
 * `timeout`, and for https e.g. `ca`), as the connector that sends the pool to its address is built from it.
 */
export type UpstreamPoolOptions = Omit<
  Pool.Options,
  'connect' | 'connectTimeout' | 'maxCachedSessions' | 'socketPath' | 'autoSelectFamily' | 'autoSelectFamilyAttemptTimeout'
> & { connect?: buildConnector.BuildOptions };

export interface UpstreamAddressesOptions {
  /** The configured origin, e.g. http://web:3000 or https://web.example:8443. */
  upstream: URL;
  /** For each address's pool. */
  pool: UpstreamPoolOptions;
  resolve: Resolve;
  /** How often the host name is resolved again. */
  resolveIntervalMs: number;
  /** How long an address that failed to connect is passed over (nginx's fail_timeout); a refused one at most 1 s. */
  skipMs: number;
  log: UpstreamLog;
  /** Default Node's timers. */
  timers?: UpstreamTimers;
}

/**
 * Follows the upstream host name as it resolves over time, as `docker compose up --scale web=3`
 * or a recreated `web` changes it: resolved again every interval off the request path, one
 * keep-alive pool per address, requests spread over the addresses in turn (round robin, O(1)),
 * pools of addresses gone from DNS closed once their requests finished, and an address that
 * failed to connect passed over for a while. When resolving fails, the last addresses stay.
 * An upstream named by an IP address or `localhost` is never resolved: one pool, as before.
 * Hand-written: undici's `retry` interceptor sent a refused request back to the same replica (25 of 200 GETs
 * failed), and its `dns` interceptor in an Agent left the proxy unhealthy after a 16,000-connection flood.
 */
export class UpstreamAddresses {
  /** Every address of the latest answer, in its order. */
  private all: UpstreamAddress[] = [];
  /** Those not skipped; requests go to these while there are any, else to all. */
  private usable: UpstreamAddress[] = [];
  private cursor = 0;
  private readonly hostname: string;
  private readonly fixed: boolean;
  /** Why there is no address yet, for the 502 of a request that comes before the first answer. */
  private resolveError: unknown = new Error('the upstream host name is not resolved yet');
  private resolving = false;
  /** The last resolution failed: logged once, when it began. */
  private failing = false;
  private timer: unknown;
  private closed = false;
  private readonly timers: UpstreamTimers;
  /** Pools of vanished addresses, closing as their last requests finish. */
  private readonly draining = new Set<Promise<void>>();

  constructor(private readonly options: UpstreamAddressesOptions) {
    const hostname = options.upstream.hostname;
    this.hostname = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
    this.fixed = isIP(this.hostname) !== 0 || this.hostname === 'localhost';
    this.timers = options.timers ?? nodeTimers;
    // Nothing to resolve: one pool on the configured origin (Node's connect tries both of localhost's addresses).
    if (this.fixed) this.setAddresses([hostname]);
  }

  /** Resolves the name a first time (a failure is logged, and resolution goes on), then every interval. */
  async start(): Promise<void> {
    if (this.fixed || this.closed) return;
    await this.refresh();
    this.schedule();
  }

  /** The next address in turn (O(1): no DNS, no search), or undefined while the name never resolved. */
  pick(): UpstreamAddress | undefined {
    const list = this.usable.length > 0 ? this.usable : this.all;
    if (list.length === 0) return undefined;
    if (this.cursor >= list.length) this.cursor = 0;
    return list[this.cursor++];
  }

  /**
   * An address the request has not tried yet, usable ones first, for a request that failed
   * on those it tried; undefined when none is left. Only failures take this path.
   */
  another(tried: readonly UpstreamAddress[]): UpstreamAddress | undefined {
    for (const list of [this.usable, this.all]) {
      for (let i = 0; i < list.length; i += 1) {
        const candidate = list[(this.cursor + i) % list.length] as UpstreamAddress;
        if (!tried.includes(candidate)) return candidate;
      }
    }
    return undefined;
  }

  /** Why pick() found no address: the last resolution's error. */
  get noAddressError(): unknown {
    return this.resolveError;
  }

  /** Passes over an address that failed to connect for a while; then requests try it again. */
  skip(target: UpstreamAddress, error: unknown): void {
    // With one address there is nothing to prefer, and a gone address is no longer chosen.
    if (target.skipped || this.all.length < 2 || !this.all.includes(target)) return;
    target.skipped = true;
    this.usable = this.all.filter((a) => !a.skipped);
    const code = codeOf(error);
    const skipMs = code === 'ECONNREFUSED' ? Math.min(REFUSED_SKIP_MS, this.options.skipMs) : this.options.skipMs;
    this.options.log.warn(`upstream ${target.address} failed to connect (${String(code)}): passed over for ${skipMs} ms`);
    target.skipTimer = this.timers.set(() => {
      target.skipped = false;
      target.skipTimer = undefined;
      this.usable = this.all.filter((a) => !a.skipped);
    }, skipMs);
  }

  /** Stops resolving and closes every pool once its requests in flight are done. */
  async close(): Promise<void> {
    this.closed = true;
    this.timers.clear(this.timer);
    const closing = this.all.map((a) => this.retire(a));
    this.all = [];
    this.usable = [];
    await Promise.all([...closing, ...this.draining]);
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = this.timers.set(() => {
      void this.refresh()
        .catch((error: unknown) => this.options.log.error({ err: error }, `using the addresses of upstream ${this.hostname} failed`))
        .finally(() => this.schedule());
    }, this.options.resolveIntervalMs);
  }

  private async refresh(): Promise<void> {
    // One resolution at a time: a slow DNS server never piles lookups up on libuv's threads.
    if (this.resolving) return;
    this.resolving = true;
    let addresses: readonly string[];
    try {
      addresses = await this.options.resolve(this.hostname);
      if (addresses.length === 0) throw new Error(`${this.hostname} resolved to no address`);
    } catch (error) {
      this.resolveError = error;
      // Logged once per outage, not every interval; the last addresses stay in use.
      if (!this.failing && !this.closed) {
        const kept = this.all.length === 0 ? 'no address to use yet' : `keeping ${this.addressList()}`;
        this.options.log.warn({ err: error }, `cannot resolve upstream ${this.hostname}: ${kept}`);
      }
      this.failing = true;
      return;
    } finally {
      this.resolving = false;
    }
    if (this.closed) return;
    if (this.failing) this.options.log.info(`upstream ${this.hostname} resolves again`);
    this.failing = false;
    this.setAddresses(addresses);
  }

  private addressList(): string {
    return this.all.map((a) => a.address).join(', ');
  }

  private setAddresses(addresses: readonly string[]): void {
    const wanted = new Set(addresses);
    if (wanted.size === this.all.length && this.all.every((a) => wanted.has(a.address))) return;
    const kept = this.all.filter((a) => wanted.has(a.address));
    for (const gone of this.all.filter((a) => !wanted.has(a.address))) {
      const drained = this.retire(gone);
      this.draining.add(drained);
      void drained.finally(() => this.draining.delete(drained));
    }
    for (const address of wanted) {
      if (!kept.some((a) => a.address === address)) kept.push(this.open(address));
    }
    this.all = kept;
    this.usable = kept.filter((a) => !a.skipped);
    if (!this.fixed) this.options.log.info(`upstream ${this.hostname} resolves to ${this.addressList()}`);
  }

  /**
   * A pool on the configured origin, so that the Host header, the TLS server name (SNI) and the
   * certificate check are the upstream's name, with a connector that connects to this address.
   * The server name is the origin's, never a request's Host (the proxy's is its client's), as nginx's proxy_ssl_name.
   */
  private open(address: string): UpstreamAddress {
    const { upstream, pool } = this.options;
    const connector = buildConnector({ allowH2: pool.allowH2, ...pool.connect });
    const tls = upstream.protocol === 'https:';
    // No server name for an IP address, as TLS has none.
    const servername = isIP(this.hostname) === 0 ? this.hostname : undefined;
    const connect: buildConnector.connector = (options, callback) =>
      connector({ ...options, ...(this.fixed ? {} : { hostname: address }), ...(tls ? { servername } : {}) }, callback);
    return { address, pool: new Pool(upstream.origin, { ...pool, connect }), skipped: false, skipTimer: undefined };
  }

  /** close(), not destroy(): requests in flight and queued on the pool finish first. */
  private async retire(target: UpstreamAddress): Promise<void> {
    this.timers.clear(target.skipTimer);
    try {
      await target.pool.close();
    } catch (error) {
      this.options.log.warn({ err: error }, `closing the pool of upstream ${target.address} failed`);
    }
  }
}
