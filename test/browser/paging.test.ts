import type { Page } from 'playwright-core';
import { addUsersToSqlite } from '@sample-services/testing/many-users';
import { expect, it } from 'vitest';
import { browserSuite } from './support/chromium.js';
import { focusedId, openSession } from './support/page-session.js';
import { useBrowserAndTwoTier } from './support/suite.js';

const USERS = 2_500;
const PAGE_SIZE = 100;
const PAGES = USERS / PAGE_SIZE;

/** Waits for page `number` of the table and returns the names it lists. */
async function namesOnPage(page: Page, number: number): Promise<string[]> {
  await page.getByRole('table', { name: `Users, page ${number}`, exact: true }).waitFor();
  return page.locator('tbody tr td:first-child').allTextContents();
}

const names = (from: number, to: number): string[] => Array.from({ length: to - from + 1 }, (_, i) => `User ${from + i}`);

browserSuite(`the users page with ${USERS.toLocaleString('en')} users`, () => {
  const suite = useBrowserAndTwoTier((dataDir) => addUsersToSqlite(dataDir, USERS));

  it(
    `pages through all of them ${PAGE_SIZE} at a time from the keyboard, each page asked for by keyset`,
    { timeout: 120_000 },
    async () => {
      const asked: string[] = [];
      const { page, screenshot, expectNoProblems, expectAccessible } = await openSession(suite.browser, suite.stack.url, {
        beforeOpening: (opening) =>
          opening.on('request', (request) => {
            const url = new URL(request.url());
            if (url.pathname.startsWith('/api/')) asked.push(url.pathname + url.search);
          }),
      });
      const seen: string[] = [...(await namesOnPage(page, 1))];
      expect(await page.getByRole('button', { name: 'Previous page' }).isDisabled()).toBe(true);
      await expectAccessible();

      // Tab: the filter, then Next (Previous is disabled, so out of the tab order). Enter pages on.
      await page.keyboard.press('Tab');
      expect(await focusedId(page)).toBe('filter');
      await page.keyboard.press('Tab');
      expect(await focusedId(page)).toBe('next');
      for (let number = 2; number <= PAGES; number += 1) {
        await page.keyboard.press('Enter');
        seen.push(...(await namesOnPage(page, number)));
      }
      expect(seen).toEqual(names(1, USERS));
      expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
      expect(await focusedId(page), 'focus moves from the disabled Next to Previous').toBe('previous');
      expect(asked).toEqual(
        Array.from({ length: PAGES }, (_, i) => `/api/users?limit=${PAGE_SIZE}${i === 0 ? '' : `&after=${i * PAGE_SIZE}`}`),
      );
      await expectAccessible();
      await screenshot('paging-last-page');

      await page.keyboard.press('Enter');
      expect(await namesOnPage(page, PAGES - 1)).toEqual(names(USERS - 2 * PAGE_SIZE + 1, USERS - PAGE_SIZE));
      expect(asked.at(-1), 'back is the same keyset page again').toBe(`/api/users?limit=${PAGE_SIZE}&after=${USERS - 2 * PAGE_SIZE}`);
      expectNoProblems();
    },
  );

  it('filters only the rows of the page shown, and keeps the filter from page to page', async () => {
    const { page, screenshot, expectNoProblems, expectAccessible } = await openSession(suite.browser, suite.stack.url);
    await namesOnPage(page, 1);
    await page.getByLabel('Filter this page').fill('user 2');
    const shown = page.locator('tbody tr:visible td:first-child');
    expect(await shown.allTextContents()).toEqual(['User 2', ...names(20, 29)]);
    expect(await page.getByRole('status').textContent()).toBe('Page 1: 100 users, 11 matching “user 2”.');
    await expectAccessible();
    await screenshot('filter-on-a-page');

    await page.getByRole('button', { name: 'Next page' }).click();
    await namesOnPage(page, 2);
    expect(await shown.allTextContents()).toEqual(['User 200']);
    expect(await page.getByLabel('Filter this page').inputValue()).toBe('user 2');
    expectNoProblems();
  });
});
