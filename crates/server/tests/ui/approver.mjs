// Four eyes in Steward's web UI, in headless Chromium: a clerk's change set cannot be applied by the clerk
// (the card says why), and a lead who signs in finds it under "Changes to decide", opens it and applies it.
//
//   STEWARD_URL=… STEWARD_TOKEN=<clerk's> STEWARD_APPROVER_TOKEN=<lead's> node approver.mjs
//
// What the server must be seeded with: the clerk's role has `approve_by: [<the lead's role>]` and
// `self_approval: false`; the scripted model answers the first message by staging writes (a change set).

import path from 'node:path';
import { SHOTS, TOKEN, fail, log, main, shot, visible } from './harness.mjs';

const APPROVER = process.env.STEWARD_APPROVER_TOKEN || '';

async function signIn(page, token) {
  await visible(page.locator('#signin:not([hidden])'), 'the sign-in form');
  await page.fill('#token', token);
  await page.click('#signin button[type=submit]');
  await visible(page.locator('#app:not([hidden])'), 'the app after signing in');
}

main('approver', async (page, errors) => {
  if (!TOKEN || !APPROVER) fail('set STEWARD_TOKEN (the clerk) and STEWARD_APPROVER_TOKEN (the lead)');
  await page.goto(process.env.STEWARD_URL);
  await signIn(page, TOKEN);

  // The clerk's request ends with a change set the clerk may not apply.
  await page.fill('#task', 'Sort my inbox into projects');
  await page.press('#task', 'Enter');
  const set = page.locator('.card.changes').last();
  await visible(set.locator('button.apply-all'), 'the change-set card');
  await set.locator('button.apply-all').click();
  await visible(set.locator('.decision', { hasText: /does not let \S+ apply their own changes/ }), 'the four-eyes refusal on the card');
  if (!(await set.locator('button.apply-all').isVisible())) fail('after a refusal the card should offer its buttons again');
  await set.screenshot({ path: path.join(SHOTS, 'approver-01-refused.png') });
  log('the clerk is told someone else applies the changes');

  // The lead signs in: the set waits under "Changes to decide".
  await page.click('#signout');
  await signIn(page, APPROVER);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.click('#menu');
  const item = page.locator('#change-sets li button.open').first();
  await visible(item, 'the clerk\'s set under "Changes to decide"');
  await page.waitForTimeout(300); // the sidebar slides in
  await shot(page, 'approver-02-phone-list.png');
  await item.click();
  const card = page.locator('.card.changes').last();
  await visible(card.locator('button.apply-all'), 'the set opened for the lead');
  await card.locator('button.apply-all').click();
  await visible(card.locator('.decision', { hasText: /Applied by \S+/ }), 'the set applied by the lead');
  await shot(page, 'approver-03-phone-applied.png');
  await page.setViewportSize({ width: 1280, height: 900 });
  if (await page.locator('#change-sets li').count()) fail('the applied set is still listed as waiting');
  log('the lead finds the set, applies it, and the list empties');

  if (errors.filter((e) => !/status of 403/.test(e)).length) fail(`the page logged errors:\n  ${errors.join('\n  ')}`);
});
