import type { Browser } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { launchChromium } from './chromium.js';
import { startTwoTier, type TwoTier } from './two-tier.js';

/** What a browser suite works with, ready once its beforeAll has run. */
export interface PageSuite {
  readonly browser: Browser;
  readonly stack: TwoTier;
}

/**
 * Chromium and the two tiers (their SQLite file filled by `seed`) for the suite this is called in:
 * started before its tests, closed after them.
 */
export function useBrowserAndTwoTier(seed?: (dataDir: string) => Promise<void>): PageSuite {
  let browser: Browser | undefined;
  let stack: TwoTier | undefined;
  beforeAll(async () => {
    browser = await launchChromium();
    stack = await startTwoTier(seed);
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });
  const ready = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is not started: use it inside a test`);
    return value;
  };
  return {
    get browser() {
      return ready(browser, 'the browser');
    },
    get stack() {
      return ready(stack, 'the two tiers');
    },
  };
}
