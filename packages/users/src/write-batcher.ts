import { DatabaseUnavailableError } from './user-store.js';

/** The bounds of a store's group commit; tests make them small. */
export interface BatchOptions {
  /** Most creates written in one transaction; default DEFAULT_MAX_BATCH. */
  maxBatch?: number;
  /** Most creates waiting for the next transaction; past it a create is refused as unavailable (503). Default DEFAULT_MAX_QUEUE. */
  maxQueue?: number;
  /** Told the size of each batch as it is sent (tests see the grouping through it). */
  onBatch?: (size: number) => void;
}

export const DEFAULT_MAX_BATCH = 256;
export const DEFAULT_MAX_QUEUE = 1024;

interface Waiting<Item, Result> {
  item: Item;
  resolve: (value: Result) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: items submitted while a batch is being written wait together and go as the next
 * batch, in one transaction. One batch at a time, so rows are written in the order they came;
 * an idle batcher waits one turn of the event loop, to gather what arrived in the same turn.
 * `write` gives one settled result per item (a duplicate fails its own item only), or rejects
 * to fail the whole batch with its error.
 */
export class WriteBatcher<Item, Result> {
  private readonly queue: Waiting<Item, Result>[] = [];
  private readonly maxBatch: number;
  private readonly maxQueue: number;
  private readonly onBatch: ((size: number) => void) | undefined;
  /** A batch is in flight or about to be sent. */
  private busy = false;
  private closing = false;
  private readonly whenIdle: (() => void)[] = [];

  constructor(
    private readonly write: (items: Item[]) => Promise<PromiseSettledResult<Result>[]>,
    options: BatchOptions = {},
  ) {
    this.maxBatch = Math.max(1, options.maxBatch ?? DEFAULT_MAX_BATCH);
    this.maxQueue = Math.max(0, options.maxQueue ?? DEFAULT_MAX_QUEUE);
    this.onBatch = options.onBatch;
  }

  /** The item's result once the transaction holding it has committed; refused at once when the queue is full or the store closing. */
  submit(item: Item): Promise<Result> {
    if (this.closing) return Promise.reject(new DatabaseUnavailableError(new Error('the store is closing')));
    if (this.queue.length >= this.maxQueue) {
      return Promise.reject(new DatabaseUnavailableError(new Error(`the write queue is full (${this.maxQueue} creates waiting)`)));
    }
    return new Promise<Result>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.busy) {
        this.busy = true;
        setImmediate(() => void this.drainQueue());
      }
    });
  }

  /** Refuses new items from now on; resolves once every item accepted before is settled. */
  close(): Promise<void> {
    this.closing = true;
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this.whenIdle.push(resolve));
  }

  private async drainQueue(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        this.onBatch?.(batch.length);
        const results = await this.write(batch.map((waiting) => waiting.item));
        for (const [i, waiting] of batch.entries()) {
          const result = results[i];
          if (result?.status === 'fulfilled') waiting.resolve(result.value);
          else waiting.reject(result === undefined ? new Error('the batch gave no result for this item') : result.reason);
        }
      } catch (error) {
        for (const waiting of batch) waiting.reject(error);
      }
    }
    this.busy = false;
    for (const resolve of this.whenIdle.splice(0)) resolve();
  }
}
