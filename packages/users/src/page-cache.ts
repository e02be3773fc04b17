import type { UserPage } from './user-store.js';

/**
 * Pages by (after, limit), bounded by the size of their JSON text: when a new page would go over
 * the budget the oldest go first, and a page bigger than the whole budget is not kept at all.
 * The owner clears it whenever the data changed.
 */
export class PageCache {
  private readonly pages = new Map<string, UserPage>();
  private bytes = 0;

  constructor(private readonly budget: number) {}

  get(after: number, limit: number): UserPage | undefined {
    return this.pages.get(`${after}:${limit}`);
  }

  /** Keeps the page when it fits, and returns it. */
  set(after: number, limit: number, page: UserPage): UserPage {
    // JSON text is mostly ASCII: its length in UTF-16 units is close to its size in bytes.
    const size = page.json.length;
    if (size > this.budget) return page;
    for (const [key, old] of this.pages) {
      if (this.bytes + size <= this.budget) break;
      this.pages.delete(key);
      this.bytes -= old.json.length;
    }
    this.pages.set(`${after}:${limit}`, page);
    this.bytes += size;
    return page;
  }

  clear(): void {
    this.pages.clear();
    this.bytes = 0;
  }
}
