import { DatabaseUnavailableError } from './user-store.js';

/** Told the size of each batch as it is written (tests see the grouping through it). */
export interface BatchOptions {
  onBatch?: (size: number) => void;
}

interface Waiting<Item, Result> {
  item: Item;
  resolve: (value: Result) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: the items submitted in one turn of the event loop are written together at the
 * end of it, in one transaction, and each is settled once that transaction has committed.
 * `write` gives one settled result per item (a duplicate fails its own item only), or rejects to
 * fail the whole batch with its error.
 */
export class TurnBatcher<Item, Result> {
  private batch: Waiting<Item, Result>[] | undefined;
  private readonly writing = new Set<Promise<void>>();
  private closing = false;

  constructor(
    private readonly write: (items: Item[]) => Promise<PromiseSettledResult<Result>[]>,
    private readonly options: BatchOptions = {},
  ) {}

  /** The item's result once the transaction holding it has committed; refused once the store is closing. */
  submit(item: Item): Promise<Result> {
    if (this.closing) return Promise.reject(new DatabaseUnavailableError(new Error('the store is closing')));
    return new Promise<Result>((resolve, reject) => {
      if (this.batch === undefined) {
        this.batch = [];
        setImmediate(() => this.flush());
      }
      this.batch.push({ item, resolve, reject });
    });
  }

  /** Refuses new items from now on; resolves once every item accepted before is settled. */
  async close(): Promise<void> {
    this.closing = true;
    // After the batch of this turn, if any, has been handed to write.
    await new Promise<void>((resolve) => setImmediate(resolve));
    await Promise.all(this.writing);
  }

  private flush(): void {
    const batch = this.batch ?? [];
    this.batch = undefined;
    this.options.onBatch?.(batch.length);
    const written = this.write(batch.map((waiting) => waiting.item)).then(
      (results) => {
        for (const [i, waiting] of batch.entries()) {
          const result = results[i];
          if (result?.status === 'fulfilled') waiting.resolve(result.value);
          else waiting.reject(result === undefined ? new Error('the batch gave no result for this item') : result.reason);
        }
      },
      (error: unknown) => {
        for (const waiting of batch) waiting.reject(error);
      },
    );
    this.writing.add(written);
    void written.finally(() => this.writing.delete(written));
  }
}
