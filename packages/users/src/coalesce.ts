/** A query running for a key, and the callers that arrived since it was sent. */
interface InFlight<T> {
  /** Waiting for the next query of this key, which starts when the running one settles. */
  next: { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } | undefined;
}

/**
 * Shares identical reads among callers without ever answering from the past. A caller may share
 * a query's result only if that query was sent after the caller arrived: whatever was committed
 * before the caller arrived (every write acknowledged to anyone, by any instance) is visible to
 * it, exactly as to a query of its own. So a caller that arrives while a query of its key is in
 * flight does not take that result; it waits for the next query, which starts as soon as the
 * running one settles and serves everyone who arrived meanwhile. One query in flight per key.
 *
 * Under load (50 clients asking for the same page) the database then runs one query where it
 * ran fifty, for at most one query's time more latency. A result or an error goes to every
 * caller of its query; no caller can cancel a query others wait for. At most maxKeys keys are
 * tracked: a caller of another key beyond that runs its own query, as without coalescing.
 */
export class Coalescer<T> {
  private readonly inFlight = new Map<string, InFlight<T>>();

  constructor(private readonly maxKeys: number) {}

  /** The query's result for this caller; `query` must depend on the key alone (it may serve later callers). */
  run(key: string, query: () => Promise<T>): Promise<T> {
    const running = this.inFlight.get(key);
    if (running !== undefined) return (running.next ??= deferred<T>()).promise;
    if (this.inFlight.size >= this.maxKeys) return query();
    return this.start(key, { next: undefined }, query);
  }

  /** Sends the query now for the caller at hand; when it settles, the next one for those who came since. */
  private start(key: string, running: InFlight<T>, query: () => Promise<T>): Promise<T> {
    this.inFlight.set(key, running);
    const result = Promise.resolve().then(query);
    const settled = (): void => {
      const waiting = running.next;
      if (waiting === undefined) {
        this.inFlight.delete(key);
        return;
      }
      const following: InFlight<T> = { next: undefined };
      this.start(key, following, query).then(waiting.resolve, waiting.reject);
    };
    result.then(settled, settled);
    return result;
  }
}

function deferred<T>(): NonNullable<InFlight<T>['next']> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
