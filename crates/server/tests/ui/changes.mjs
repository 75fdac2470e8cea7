// The change-set card of Steward's web UI in headless Chromium (Debian's /usr/bin/chromium, playwright-core):
// a run that sorts the inbox ends with one change set; it is read on a desktop and on a phone, some changes are
// chosen from the keyboard and applied, a read-only follow-up does not wait, and after a reload the card says
// who applied it.
//
//   npm ci && STEWARD_URL=http://127.0.0.1:8080 STEWARD_TOKEN=secret node changes.mjs
//
// Environment: STEWARD_URL, STEWARD_TOKEN (the server requires it), STEWARD_SCREENSHOTS, STEWARD_TIMEOUT_MS,
// STEWARD_CHROMIUM, as for e2e.mjs; STEWARD_UNCHECK: a text the changes to leave out contain (default "Garden").
// What the server must be seeded with: the scripted model answers the first message by reading the inbox,
// creating two projects and moving eight tasks (the writes are staged), then answers; it answers the second
// message with a read-only call and an answer.
// Exit status: 0 when every expectation held, 1 with "E2E FAILED: …" on the first that did not, 2 when it could
// not start.

import { SHOTS, TOKEN, URL_, fail, log, main, shot, visible } from './harness.mjs';
import path from 'node:path';

const UNCHECK = process.env.STEWARD_UNCHECK || 'Garden';

/** Nothing on the page is wider than the screen: no sideways scrolling. */
async function fits(page, what) {
  const widths = await page.evaluate(() => {
    const cardNode = document.querySelector('.card.changes');
    return { page: document.documentElement.scrollWidth, screen: window.innerWidth,
      card: cardNode ? cardNode.scrollWidth - cardNode.clientWidth : 0 };
  });
  if (widths.page > widths.screen) fail(`${what}: the page is ${widths.page} px wide on a ${widths.screen} px screen`);
  if (widths.card > 0) fail(`${what}: the change-set card overflows by ${widths.card} px`);
  return widths;
}

async function send(page, text) {
  await page.fill('#task', text);
  await page.press('#task', 'Enter');
  await visible(page.locator('.turn.user .bubble', { hasText: text.slice(0, 30) }), 'the message in the chat');
}

async function run(page, errors) {
  await page.goto(URL_);
  await visible(page.locator('#signin:not([hidden]), #app:not([hidden])'), 'the sign-in form or the app');
  if (TOKEN) {
    await page.fill('#token', TOKEN);
    await page.click('#signin button[type=submit]');
  }
  await visible(page.locator('#app'), 'the app');

  // One request, one change set: two projects, eight moves, nothing written yet.
  await send(page, 'Sort my inbox into projects');
  const set = page.locator('.card.changes').last();
  await visible(set.locator('button.apply-all'), 'a change-set card with Apply all');
  await visible(page.locator('.turn.assistant .answer').last(), 'the answer after the change set');
  if (await page.locator('.card.approval').count()) fail('an approval card appeared: the writes should be staged');
  const items = await set.locator('ol.changes > li').count();
  if (await set.locator('ol.changes').isVisible()) fail('the calls list should be folded under the diff');
  if (items !== 10) fail(`the change set lists ${items} changes, not 10`);
  const tables = await set.locator('.diff-table h4 code').allInnerTexts();
  if (tables.join(',') !== 'projects,tasks') fail(`the diff is grouped by table as ${tables}, not projects,tasks`);
  if ((await set.locator('ul.diff li.insert').count()) !== 2) fail('the diff does not show 2 new projects');
  if ((await set.locator('ul.diff li.update').count()) !== 8) fail('the diff does not show 8 changed tasks');
  const first = (await set.locator('ul.diff li.update').first().innerText()).replace(/\s+/g, ' ');
  if (!/project: inbox → #-\d/.test(first)) fail(`a moved task does not read before → after: ${first}`);
  if (!(await set.locator('.card-title').innerText()).includes('nothing written yet')) fail('the card does not say nothing is written yet');
  await set.scrollIntoViewIfNeeded();
  await set.screenshot({ path: path.join(SHOTS, 'changes-01-desktop.png') });
  log('one change set: 10 changes, grouped by table (projects, tasks), before → after');

  // A phone: the card fits the screen.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(200);
  const widths = await fits(page, 'on a phone');
  await set.screenshot({ path: path.join(SHOTS, 'changes-02-phone.png') });
  await page.setViewportSize({ width: 1280, height: 900 });
  log(`on a 390 px phone the card fits (page ${widths.page} px wide)`);

  // Choose from the keyboard: leave out the changes about UNCHECK (the first with Space, the rest by clicking).
  const leave = set.locator('ul.diff > li', { hasText: UNCHECK });
  const n = await leave.count();
  if (n < 2) fail(`fewer than 2 changes mention ${UNCHECK}`);
  await leave.first().locator('input[type=checkbox]').focus();
  await page.keyboard.press('Space');
  if (await leave.first().locator('input[type=checkbox]').isChecked()) fail('Space did not clear the box');
  for (let i = 1; i < n; i++) await leave.nth(i).locator('input[type=checkbox]').uncheck();
  const applySome = set.locator('button.apply-selected');
  const label = await applySome.innerText();
  if (!label.includes(`(${10 - n})`)) fail(`the button reads "${label}", not ${10 - n} selected`);
  await applySome.focus();
  await page.keyboard.press('Enter');
  await visible(set.locator('.decision', { hasText: /Applied by/ }), 'the card saying who applied it');
  const said = await set.locator('.decision').innerText();
  if (!said.includes(`${10 - n} changes written`)) fail(`the card says "${said}", not ${10 - n} changes written`);
  if (await set.locator('button.apply-all').isVisible()) fail('the buttons stay after the decision');
  await set.screenshot({ path: path.join(SHOTS, 'changes-03-applied.png') });
  log(`applied ${10 - n} chosen changes from the keyboard: "${said}"`);

  // A read-only follow-up never waits.
  await send(page, 'Which projects do I have now?');
  await visible(page.locator('.turn.assistant .answer').nth(1), 'the follow-up answer');
  if (await page.locator('.card.approval').count()) fail('the read-only follow-up waits for approval');
  if ((await page.locator('.card.changes').count()) !== 1) fail('the read-only follow-up staged changes');
  log('a read-only follow-up answered without waiting');

  // After a reload the card says who applied it, and when.
  await page.reload();
  await visible(page.locator('#app'), 'the app after a reload');
  const again = page.locator('.card.changes').last();
  await visible(again.locator('.decision', { hasText: /Applied by \S+/ }), 'the decided card after a reload');
  if (await again.locator('button.apply-all').isVisible()) fail('a decided card offers Apply after a reload');
  const cards = await page.locator('.card.changes').count();
  if (cards !== 1) fail(`after a reload the conversation shows ${cards} change-set cards, not 1`);
  const skipped = await again.locator('ul.diff li.skipped').count();
  if (skipped !== n) fail(`after a reload ${skipped} rows read as discarded, not ${n}`);
  const kept = await again.locator('ul.diff input:checked').count();
  if (kept !== 10 - n) fail(`after a reload ${kept} rows read as written, not ${10 - n}`);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(200);
  await fits(page, 'the decided card on a phone');
  await again.scrollIntoViewIfNeeded();
  await shot(page, 'changes-04-phone-decided.png');
  log('after a reload the card says who applied it');

  if (errors.length) fail(`the page logged errors:\n  ${errors.join('\n  ')}`);
}

main('changes', run);
