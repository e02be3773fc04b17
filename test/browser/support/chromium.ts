/**
 * Debian's Chromium driven by playwright-core. Optional on a workstation (the suites skip with a
 * message), never in CI: with CI=true a missing Chromium fails them.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { describe, expect } from 'vitest';

export const chromiumPath = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
const installed = existsSync(chromiumPath);
const required = process.env.CI === 'true';

if (!installed && !required) {
  console.warn(
    `SKIPPED: no Chromium at ${chromiumPath} (apt-get install chromium, or set CHROMIUM_BIN); the users page was not tested in a browser.`,
  );
}

/** describe, or describe.skip where Chromium is missing outside CI. */
export const browserSuite = installed || required ? describe : describe.skip;

/**
 * Without the background-networking flags Chromium keeps calling home, and this machine's closed
 * network refuses those connections. launch() gives every browser a fresh temporary profile
 * (--user-data-dir) and removes it on close.
 */
const flags = [
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** `home`: Chromium's HOME, whose NSS database (.pki/nssdb) holds the authorities the user trusts on Linux. */
export async function launchChromium(options: { home?: string } = {}): Promise<Browser> {
  expect(installed, `Chromium must be installed at ${chromiumPath} when CI=true`).toBe(true);
  // Chromium's sandbox refuses to run as root.
  const asRoot = process.getuid?.() === 0;
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: asRoot ? ['--no-sandbox', ...flags] : flags,
    ...(options.home === undefined ? {} : { env: { ...process.env, HOME: options.home } }),
  });
}
