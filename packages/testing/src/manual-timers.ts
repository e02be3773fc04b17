import type { UpstreamTimers } from '@sample-services/upstream/upstream-addresses';

interface Pending {
  at: number;
  callback: () => void;
}

/**
 * Timers that fire only when the test moves the clock on: a resolve interval or a skip time then
 * passes exactly, however slow the machine.
 */
export class ManualTimers implements UpstreamTimers {
  private now = 0;
  private readonly pending = new Map<object, Pending>();

  set(callback: () => void, ms: number): object {
    const timer = {};
    this.pending.set(timer, { at: this.now + ms, callback });
    return timer;
  }

  clear(timer: unknown): void {
    if (typeof timer === 'object' && timer !== null) this.pending.delete(timer);
  }

  /** How many timers wait to fire. */
  get waiting(): number {
    return this.pending.size;
  }

  /**
   * Moves the clock on by `ms`, firing each timer that falls due on the way, earliest first, and
   * resolves once what each started without I/O is done (a resolution by a resolver that answers at once).
   */
  async advance(ms: number): Promise<void> {
    const until = this.now + ms;
    for (;;) {
      let next: [object, Pending] | undefined;
      for (const entry of this.pending) if (entry[1].at <= until && (next === undefined || entry[1].at < next[1].at)) next = entry;
      if (next === undefined) break;
      this.pending.delete(next[0]);
      this.now = next[1].at;
      next[1].callback();
      // Every promise job the callback queued runs before the next macrotask.
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.now = until;
  }
}
