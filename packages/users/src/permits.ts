/** A counting semaphore: at most `count` tasks run at once; the others wait for a permit in arrival order. */
export class Permits {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(count: number) {
    this.free = count;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free -= 1;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await task();
    } finally {
      // The permit passes straight to the next in line, or is given back.
      const next = this.waiting.shift();
      if (next === undefined) this.free += 1;
      else next();
    }
  }
}
