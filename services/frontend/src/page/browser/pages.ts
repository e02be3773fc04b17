/// <reference lib="dom" />

/**
 * Where the reader is in a keyset-paginated list: the URL of every page seen on the way to the
 * current one (keyset pages can only be found going forward, so going back retraces them), and
 * the next page's URL once the current page has told it.
 */
export class PageTrail {
  readonly #urls: string[];
  #index = 0;
  #next: string | undefined;

  constructor(first: string) {
    this.#urls = [first];
  }

  get current(): string {
    return this.#urls[this.#index] ?? '';
  }

  /** 1 for the first page. */
  get number(): number {
    return this.#index + 1;
  }

  get hasPrevious(): boolean {
    return this.#index > 0;
  }

  get hasNext(): boolean {
    return this.#next !== undefined;
  }

  /** What the current page said of the next one: its URL, or undefined on the last page. */
  learnNext(url: string | undefined): void {
    this.#next = url;
  }

  forward(): void {
    if (this.#next === undefined) return;
    this.#urls.length = this.#index + 1;
    this.#urls.push(this.#next);
    this.#index += 1;
    this.#next = undefined;
  }

  back(): void {
    if (this.#index === 0) return;
    this.#index -= 1;
    this.#next = undefined;
  }
}
