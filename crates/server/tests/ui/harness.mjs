// What the web UI's browser scripts share (e2e.mjs, changes.mjs): the settings from the environment, waiting
// for what a person would see, screenshots, and a run in a fresh headless Chromium that reports
// "E2E PASSED" or "E2E FAILED: …" (exit 0, 1; 2 when it could not start).
//
// Environment: STEWARD_URL (required), STEWARD_TOKEN, STEWARD_SCREENSHOTS (default ./screenshots),
// STEWARD_TIMEOUT_MS (default 30000), STEWARD_CHROMIUM (default /usr/bin/chromium).

import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

export const URL_ = process.env.STEWARD_URL;
export const TOKEN = process.env.STEWARD_TOKEN || '';
export const SHOTS = path.resolve(process.env.STEWARD_SCREENSHOTS || 'screenshots');
export const TIMEOUT = Number(process.env.STEWARD_TIMEOUT_MS || 30000);
const BROWSER = process.env.STEWARD_CHROMIUM || '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic',
  '--no-first-run', '--disable-component-update', '--disable-sync'];

export class Failure extends Error {}
export const fail = (message) => { throw new Failure(message); };
export const log = (message) => console.log(`ok   ${message}`);

/** Waits until `locator` shows; fails saying `what` was expected. */
export async function visible(locator, what) {
  try {
    await locator.first().waitFor({ state: 'visible', timeout: TIMEOUT });
  } catch {
    fail(`expected ${what} within ${TIMEOUT} ms`);
  }
  return locator;
}

/** A screenshot of the page, saved as `name` under STEWARD_SCREENSHOTS. */
export async function shot(page, name) {
  await page.screenshot({ path: path.join(SHOTS, name) });
}

/** Runs `run(page, errors)` in a fresh Chromium profile (`prefix` names it; a failure's screenshot is
 *  `${prefix}-failure.png`) and exits with its verdict. `errors` collects the page's script errors (401s are
 *  expected: the UI's first /api/me goes without a token). */
export async function main(prefix, run) {
  if (!URL_) {
    console.error('E2E SETUP: set STEWARD_URL to the server (e.g. http://127.0.0.1:8080)');
    process.exit(2);
  }
  await mkdir(SHOTS, { recursive: true });
  const profile = await mkdtemp(path.join(tmpdir(), `steward-${prefix}-`));
  let context;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: BROWSER, headless: true, args: ARGS, viewport: { width: 1280, height: 900 },
    });
  } catch (err) {
    console.error(`E2E SETUP: could not start ${BROWSER}: ${err.message.split('\n')[0]} (apt-get install -y chromium)`);
    await rm(profile, { recursive: true, force: true });
    process.exit(2);
  }
  const page = context.pages()[0] || await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error' && !/status of 401/.test(m.text())) errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(`uncaught: ${e.message}`));
  let status = 0;
  try {
    await run(page, errors);
    console.log(`E2E PASSED (screenshots in ${SHOTS})`);
  } catch (err) {
    status = 1;
    console.error(`E2E FAILED: ${err instanceof Failure ? err.message : err.stack || err}`);
    if (errors.length) console.error(`page errors:\n  ${errors.join('\n  ')}`);
    const chat = await page.locator('#chat').innerText({ timeout: 2000 }).catch(() => '');
    if (chat) console.error(`chat:\n${chat.slice(-3000)}`);
    await shot(page, `${prefix}-failure.png`).catch(() => {});
  } finally {
    await context.close().catch(() => {});
    await rm(profile, { recursive: true, force: true });
  }
  process.exit(status);
}
