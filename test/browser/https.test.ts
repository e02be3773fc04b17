import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '@sample-services/testing/free-port';
import { makeLocalCertificates, type LocalCertificates } from '@sample-services/testing/local-cert';
import { startService, type ServiceProcess } from '@sample-services/testing/service-process';
import { browserSuite, launchChromium } from './support/chromium.js';
import { openSession, patiently } from './support/page-session.js';
import { certutilInstalled, homeTrusting } from './support/trusting-home.js';
import { startTwoTier, storeUsers, type TwoTier } from './support/two-tier.js';

// certutil is optional on a workstation, never in CI: there its absence is a failure.
if (!certutilInstalled && process.env.CI !== 'true') {
  console.warn('SKIPPED: certutil is not installed (apt-get install libnss3-tools); the users page was not loaded over HTTPS.');
}
const suite = certutilInstalled || process.env.CI === 'true' ? browserSuite : browserSuite.skip;

const users = [
  { name: 'Ada Lovelace', email: 'ada@example.com' },
  { name: 'Alan Turing', email: 'alan@example.com' },
];

suite('the users page over HTTPS and HTTP/2, through the TypeScript proxy, the local authority trusted', () => {
  let certs: LocalCertificates;
  let home: string;
  let stack: TwoTier;
  let proxy: ServiceProcess;
  let browser: Browser;
  let pageUrl: string;
  beforeAll(async () => {
    expect(certutilInstalled, 'certutil must be installed when CI=true (libnss3-tools)').toBe(true);
    certs = await makeLocalCertificates();
    home = homeTrusting(join(certs.dir, 'ca.crt'));
    stack = await startTwoTier((dataDir) => storeUsers(dataDir, users));
    const tlsPort = await freePort();
    proxy = await startService('proxy', {
      UPSTREAM_URL: stack.url,
      TLS_CERT_FILE: certs.certFile,
      TLS_KEY_FILE: certs.keyFile,
      TLS_PORT: String(tlsPort),
    });
    pageUrl = `https://localhost:${tlsPort}/`;
    browser = await launchChromium({ home });
  });
  afterAll(async () => {
    await browser?.close();
    await proxy?.stop();
    await stack?.stop();
    await certs?.remove();
    if (home !== undefined) rmSync(home, { recursive: true, force: true });
  });

  it('loads the page and its users over h2 with the certificate verified, and passes axe', async () => {
    const { page, screenshot, expectNoProblems, expectAccessible } = await openSession(browser, pageUrl);
    await page.getByRole('table', { name: 'Users, page 1' }).waitFor();
    expect(await page.locator('tbody td:nth-child(1)').allTextContents()).toEqual(users.map((user) => user.name));
    await expect.poll(() => page.getByRole('status').textContent(), patiently).toBe('Page 1: 2 users.');
    // The page and the users it fetched came over HTTP/2, on a connection Chromium trusted (no interstitial).
    const protocols = await page.evaluate(
      'performance.getEntriesByType("navigation").concat(performance.getEntriesByType("resource")).map((e) => [e.name.replace(location.origin, ""), e.nextHopProtocol])',
    );
    expect(protocols).toEqual(
      expect.arrayContaining([
        ['/', 'h2'],
        [expect.stringMatching(/^\/api\/users/), 'h2'],
      ]),
    );
    expect(await page.evaluate('window.isSecureContext')).toBe(true);
    await expectAccessible();
    await screenshot('https-list');
    expectNoProblems();
  });

  it('is refused by a Chromium that does not trust the local authority', async () => {
    const untrusting = await launchChromium();
    try {
      const page = await untrusting.newPage();
      await expect(page.goto(pageUrl)).rejects.toThrow(/ERR_CERT_AUTHORITY_INVALID/);
    } finally {
      await untrusting.close();
    }
  });
});
