/**
 * One page in a fresh browser context that records everything that must not happen: console
 * errors, uncaught exceptions, CSP violations, dialogs (an injected alert()). Tests end with
 * expectNoProblems(); the context closes when the test finishes, passed or not.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { expect, onTestFinished } from 'vitest';

/** Git-ignored: each test leaves a picture of what it saw. */
export const screenshotsDir = fileURLToPath(new URL('../screenshots/', import.meta.url));

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

// Runs in the page before its own scripts. Init scripts come from the browser's debugging
// protocol, so the page's CSP does not block them (nor the binding they call).
const reportViolations = `document.addEventListener('securitypolicyviolation', (event) =>
  reportViolation(event.violatedDirective + ' blocked ' + (event.blockedURI || 'inline') + ' at ' + event.sourceFile + ':' + event.lineNumber));`;

export interface SessionOptions extends BrowserContextOptions {
  /**
   * Loads the test provokes and expects to fail with this status (Chromium logs each as a console
   * error: "Failed to load resource: ... status of 500"), by URL. Any other console error fails.
   */
  expectedFailedLoads?: { status: number; url: RegExp };
  /** Called with the page before it opens the URL, to watch it from its first request. */
  beforeOpening?: (page: Page) => void;
}

export interface PageSession {
  page: Page;
  /** Writes screenshots/<name>.png, the whole page. */
  screenshot: (name: string) => Promise<void>;
  /** Fails on any problem recorded so far. */
  expectNoProblems: () => void;
  /** Runs axe-core in the page: no violation rated serious or critical. */
  expectAccessible: () => Promise<void>;
}

interface AxeResults {
  violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[];
}

export async function openSession(browser: Browser, url: string, options: SessionOptions = {}): Promise<PageSession> {
  const { expectedFailedLoads, beforeOpening, ...contextOptions } = options;
  const context = await browser.newContext({ viewport: { width: 1024, height: 768 }, ...contextOptions });
  onTestFinished(() => context.close());
  const problems: string[] = [];
  await context.exposeFunction('reportViolation', (text: string) => problems.push(`CSP violation: ${text}`));
  await context.addInitScript({ content: reportViolations });
  await context.addInitScript({ content: axeSource });

  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    const expected =
      expectedFailedLoads !== undefined &&
      message.text().includes(`the server responded with a status of ${expectedFailedLoads.status}`) &&
      expectedFailedLoads.url.test(message.location().url);
    if (!expected) problems.push(`console error: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => problems.push(`uncaught in the page: ${error.message}`));
  page.on('dialog', (dialog) => {
    problems.push(`dialog opened: ${dialog.type()} ${dialog.message()}`);
    void dialog.dismiss();
  });
  beforeOpening?.(page);
  await page.goto(url);

  return {
    page,
    screenshot: async (name) => {
      mkdirSync(screenshotsDir, { recursive: true });
      await page.screenshot({ path: `${screenshotsDir}${name}.png`, fullPage: true });
    },
    expectNoProblems: () => expect(problems).toEqual([]),
    expectAccessible: async () => {
      const results = (await page.evaluate('axe.run(document)')) as AxeResults;
      const serious = results.violations
        .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
        .map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((node) => JSON.stringify(node.target)).join(', ')}`);
      expect(serious).toEqual([]);
    },
  };
}

/** For expect.poll: a loaded machine (2 cores shared by several test runs) may take seconds. */
export const patiently = { timeout: 15_000, interval: 50 };

/** The id of the element that has the keyboard focus ('' for none). */
export async function focusedId(page: Page): Promise<string> {
  // A string, not a function: this file is compiled for Node, without the DOM's types.
  return (await page.evaluate('document.activeElement?.id ?? ""')) as string;
}
