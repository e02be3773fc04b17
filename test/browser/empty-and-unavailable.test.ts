import { expect, it } from 'vitest';
import { browserSuite } from './support/chromium.js';
import { focusedId, openSession, patiently } from './support/page-session.js';
import { useBrowserAndTwoTier } from './support/suite.js';
import { storeUsers } from './support/two-tier.js';

browserSuite('the users page with no users', () => {
  const suite = useBrowserAndTwoTier();

  it('says there are none, with no empty table, filter or page buttons', async () => {
    const { page, screenshot, expectNoProblems, expectAccessible } = await openSession(suite.browser, suite.stack.url);
    await expect.poll(() => page.getByRole('status').textContent(), patiently).toBe('There are no users yet.');
    expect(await page.locator('#list').isHidden()).toBe(true);
    expect(await page.getByRole('alert').count()).toBe(0);
    await expectAccessible();
    await screenshot('empty');
    expectNoProblems();
  });
});

browserSuite('the users page while the backend is down', () => {
  const suite = useBrowserAndTwoTier((dataDir) => storeUsers(dataDir, [{ name: 'Ada Lovelace', email: 'ada@example.com' }]));

  it('shows the error with a Retry button, which from the keyboard loads the users once the backend is back', async () => {
    await suite.stack.stopBackend();
    const listRequests: string[] = [];
    const { page, screenshot, expectNoProblems, expectAccessible } = await openSession(suite.browser, suite.stack.url, {
      // The frontend's 500 {"error":"Failed to fetch users"}, provoked here; Chromium logs each one.
      expectedFailedLoads: { status: 500, url: /\/api\/users\?limit=100$/ },
      beforeOpening: (opening) =>
        opening.on('response', (response) => {
          if (response.url().includes('/api/users')) listRequests.push(`${response.status()} ${new URL(response.url()).search}`);
        }),
    });
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.locator('p').textContent()).toBe(
      'The users could not be loaded (Failed to fetch users). The service behind this page may be down; retry in a moment.',
    );
    expect(await page.locator('#list').isHidden()).toBe(true);
    await expectAccessible();
    await screenshot('backend-down');

    // Keyboard only: the first Tab reaches Retry; while the backend is still down it fails again.
    await page.keyboard.press('Tab');
    expect(await focusedId(page)).toBe('retry');
    await page.keyboard.press('Enter');
    await expect.poll(() => listRequests.length, patiently).toBe(2);
    await expect.poll(() => alert.isVisible(), patiently).toBe(true);

    await suite.stack.startBackend();
    await page.keyboard.press('Enter');
    await page.getByRole('cell', { name: 'Ada Lovelace', exact: true }).waitFor();
    expect(await alert.count()).toBe(0);
    expect(listRequests).toEqual(['500 ?limit=100', '500 ?limit=100', '200 ?limit=100']);
    expect(await focusedId(page), 'focus leaves the hidden Retry for the table').toBe('users');
    await expectAccessible();
    await screenshot('retry-recovered');
    expectNoProblems();
  });
});
