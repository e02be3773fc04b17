import { expect, it } from 'vitest';
import { browserSuite } from './support/chromium.js';
import { focusedId, openSession, patiently } from './support/page-session.js';
import { useBrowserAndTwoTier } from './support/suite.js';
import { storeUsers } from './support/two-tier.js';

const injection = '<img src=x onerror=alert(1)>';
const users = [
  { name: 'John Doe', email: 'john@example.com' },
  { name: 'Jane Smith', email: 'jane@example.com' },
  { name: injection, email: 'mallory@example.com' },
];

browserSuite('the users page with a few users', () => {
  const suite = useBrowserAndTwoTier((dataDir) => storeUsers(dataDir, users));

  it('lists every user in a captioned table: name, email, and when created, in the reader’s locale and time zone', async () => {
    const { page, screenshot, expectNoProblems, expectAccessible } = await openSession(suite.browser, suite.stack.url, {
      locale: 'en-GB',
      timezoneId: 'Europe/Berlin',
    });
    const table = page.getByRole('table', { name: 'Users, page 1' });
    await table.waitFor();
    expect(await table.locator('thead th[scope="col"]').allTextContents()).toEqual(['Name', 'Email', 'Created']);
    const rows = table.locator('tbody tr');
    expect(await rows.count()).toBe(3);
    expect(await rows.locator('td:nth-child(1)').allTextContents()).toEqual(users.map((u) => u.name));
    expect(await rows.locator('td:nth-child(2)').allTextContents()).toEqual(users.map((u) => u.email));

    const listed = (await (await fetch(`${suite.stack.url}/api/users`)).json()) as { created_at: string }[];
    const created = rows.first().locator('td:nth-child(3) time');
    expect(await created.getAttribute('datetime')).toBe(listed[0]?.created_at);
    // What this reader's Intl writes for that instant: their locale, their zone (not the server's, not UTC).
    const expected = await page.evaluate(
      (iso) =>
        new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'Europe/Berlin' }).format(new Date(iso)),
      listed[0]?.created_at ?? '',
    );
    expect(await created.textContent()).toBe(expected);
    await expect.poll(() => page.getByRole('status').textContent(), patiently).toBe('Page 1: 3 users.');
    expect(await page.locator('#pager').isHidden(), 'no page buttons when every user fits on one page').toBe(true);

    await expectAccessible();
    await screenshot('list');
    expectNoProblems();
  });

  it('writes the same instant for another reader in their own locale and zone', async () => {
    const { page, screenshot, expectNoProblems } = await openSession(suite.browser, suite.stack.url, {
      locale: 'de-DE',
      timezoneId: 'America/New_York',
    });
    const created = page.locator('tbody tr').first().locator('time');
    await created.waitFor();
    const iso = (await created.getAttribute('datetime')) ?? '';
    const expected = await page.evaluate(
      (at) =>
        new Intl.DateTimeFormat('de-DE', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'America/New_York' }).format(new Date(at)),
      iso,
    );
    expect(await created.textContent()).toBe(expected);
    await screenshot('list-de-DE-new-york');
    expectNoProblems();
  });

  it('shows a name written as HTML as those characters: no element, no script run', async () => {
    const { page, screenshot, expectNoProblems } = await openSession(suite.browser, suite.stack.url);
    const cell = page.getByRole('cell', { name: injection, exact: true });
    await cell.waitFor();
    expect(await cell.textContent()).toBe(injection);
    expect(await page.locator('table img').count()).toBe(0);
    await screenshot('script-injection-as-text');
    expectNoProblems(); // a dialog (alert) or a CSP violation would be recorded there
  });

  it('filters the rows shown as the reader types, from the keyboard (in the dark colour scheme)', async () => {
    // Dark, so that axe checks the contrast of that scheme's colours too.
    const { page, screenshot, expectNoProblems, expectAccessible } = await openSession(suite.browser, suite.stack.url, {
      colorScheme: 'dark',
    });
    const rows = page.locator('tbody tr');
    await rows.first().waitFor();
    await page.keyboard.press('Tab');
    expect(await focusedId(page)).toBe('filter');
    await page.keyboard.type('JANE');
    await expect.poll(() => rows.locator('visible=true').count(), patiently).toBe(1);
    expect(await rows.locator('visible=true').locator('td').first().textContent()).toBe('Jane Smith');
    expect(await page.getByRole('status').textContent()).toBe('Page 1: 3 users, 1 matching “JANE”.');
    await expectAccessible();
    await screenshot('filter');

    await page.keyboard.type('X');
    await expect.poll(() => rows.locator('visible=true').count(), patiently).toBe(0);
    expect(await page.locator('#no-match').textContent()).toBe('No user on this page matches “JANEX”.');

    await page.getByLabel('Filter this page').fill('');
    await expect.poll(() => rows.locator('visible=true').count(), patiently).toBe(3);
    expect(await page.locator('#no-match').isHidden()).toBe(true);
    expectNoProblems();
  });
});
