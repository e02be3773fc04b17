import { describe, expect, it } from 'vitest';
import { Permits } from '../src/permits.js';

describe('Permits', () => {
  it('runs at most `count` tasks at once, the others in arrival order as permits free, failed ones included', async () => {
    const permits = new Permits(2);
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const task = (id: number) => async (): Promise<number> => {
      started.push(id);
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 10));
      running -= 1;
      if (id === 1) throw new Error('failed');
      return id;
    };
    const results = await Promise.allSettled([1, 2, 3, 4, 5].map((id) => permits.run(task(id))));
    expect(most).toBe(2);
    expect(started).toEqual([1, 2, 3, 4, 5]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    // Every permit was given back: two run at once again.
    await Promise.all([permits.run(task(6)), permits.run(task(7))]);
    expect(started.slice(-2)).toEqual([6, 7]);
  });
});
