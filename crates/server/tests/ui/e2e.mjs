// End-to-end test of Steward's web UI in headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core).
//
//   npm ci && STEWARD_URL=http://127.0.0.1:8080 STEWARD_TOKEN=secret node e2e.mjs
//
// Environment:
//   STEWARD_URL          the server's base URL (required).
//   STEWARD_TOKEN        the token to sign in with. Set: the server must require auth; the test first tries a wrong
//                        token (expects a refusal), then this one. Unset: the server must need no token.
//   STEWARD_MESSAGE      what to send (default below).
//   STEWARD_EXPECT       a substring the final answer must contain (default: any non-empty answer).
//   STEWARD_SCREENSHOTS  where to save the PNGs (default: ./screenshots).
//   STEWARD_TIMEOUT_MS   how long each expectation waits (default 30000).
//   STEWARD_CHROMIUM     the browser (default /usr/bin/chromium).
// Exit status: 0 when every expectation held, 1 with "E2E FAILED: …" on the first that did not, 2 when it could not
// start (no URL, no browser).
//
// What the server must be seeded with: the scripted model behind the conversation's agent answers the message
// (whatever STEWARD_MESSAGE is) with this flow, as events on POST /api/conversations/{id}/messages:
//   1. a tool call whose event carries `sql` (e.g. run_sql with a SELECT ... GROUP BY month), and its observation
//      with `table` of at least 2 rows (a month label such as "2024-01" and at least one numeric column) and the
//      `chart` the server draws from it;
//   2. a call to a write tool that needs approval, so the stream ends with an `approval` event;
// and, after POST /api/approvals/{id} {"decision":"approve"} (Accept: text/event-stream), the resumed run streams
//   3. the write's observation and a final `answer` containing STEWARD_EXPECT.
// GET /api/conversations/{id} must then return the user message and the answer (the test reloads the page).

import { SHOTS, TOKEN, URL_, fail, log, main, shot, visible } from './harness.mjs';
import path from 'node:path';

const MESSAGE = process.env.STEWARD_MESSAGE || 'How did revenue develop by month this year? Then record the December refund adjustment.';
const EXPECT = process.env.STEWARD_EXPECT || '';

async function run(page, errors) {
  await page.goto(URL_);
  await visible(page.locator('#signin:not([hidden]), #app:not([hidden])'), 'the sign-in form or the app');

  // Sign in.
  if (TOKEN) {
    if (!(await page.locator('#signin').isVisible())) fail('STEWARD_TOKEN is set but the UI opened without asking for it: the server must require auth');
    await page.fill('#token', 'not-the-token');
    await page.press('#token', 'Enter');
    await visible(page.locator('#signin-error', { hasText: /not accepted/i }), 'a refusal of a wrong token');
    log('a wrong token is refused');
    await shot(page, '01-signin.png');
    await page.fill('#token', TOKEN);
    await page.click('#signin button[type=submit]');
    await visible(page.locator('#app'), 'the app after signing in');
    const stored = await page.evaluate(() => localStorage.getItem('steward.token'));
    if (stored !== JSON.stringify(TOKEN)) fail('the token was not remembered in localStorage');
    log('signed in; the token is remembered');
  } else {
    if (!(await page.locator('#app').isVisible())) fail('the UI asks for a token: set STEWARD_TOKEN');
    log('no sign-in needed');
  }
  if ((await page.locator('#set-agent option').count()) < 1) fail('the settings list no agent (from /api/me)');
  await shot(page, '02-start.png');

  // Send a message; the steps stream in.
  await page.fill('#task', MESSAGE);
  await page.press('#task', 'Enter');
  await visible(page.locator('.turn.user .bubble', { hasText: MESSAGE.slice(0, 40) }), 'the message in the chat');
  await visible(page.locator('.card.tool .tok-keyword'), 'a tool call with highlighted SQL');
  log('a tool call with highlighted SQL streamed in');
  const table = page.locator('.card.tool table.rows').first();
  await visible(table, 'a result table');
  const rows = await table.locator('tbody tr').count();
  if (rows < 2) fail(`expected at least 2 result rows, saw ${rows}`);
  const chart = page.locator('.card.tool figure.chart svg').first();
  await visible(chart, 'a chart in the chat');
  const drawn = await chart.evaluate((svg) => ({ label: svg.getAttribute('aria-label') || '', role: svg.getAttribute('role'),
    marks: svg.querySelectorAll('rect.bar, circle.point').length, width: svg.getBoundingClientRect().width }));
  if (drawn.role !== 'img' || !drawn.label) fail(`the chart has no role or label: ${JSON.stringify(drawn)}`);
  if (!(drawn.width > 0) || drawn.marks < 2) fail(`the chart draws nothing: ${JSON.stringify(drawn)}`);
  log(`a table of ${rows} rows and a chart ("${drawn.label}", ${drawn.marks} marks)`);
  // Its values show on keyboard focus.
  const mark = chart.locator('rect.bar, circle.point').first();
  await mark.focus();
  const said = await page.locator('.card.tool figure.chart .chart-value').first().textContent();
  if (!/·/.test(said || '')) fail(`focusing a mark did not show its value: "${said}"`);
  log(`a mark says its value on focus: "${said}"`);
  // The switch draws the other kind, and Table hides the chart.
  const card = page.locator('.card.tool').filter({ has: page.locator('figure.chart') }).first();
  const other = (await card.locator('figure.chart').getAttribute('data-kind')) === 'line' ? 'bar' : 'line';
  await card.locator(`button.view-${other}`).click();
  await visible(card.locator(`figure.chart[data-kind="${other}"] svg`), `the chart redrawn as ${other}`);
  await card.locator('button.view-table').click();
  if (await card.locator('figure.chart').isVisible()) fail('Table did not hide the chart');
  await card.locator(`button.view-${other === 'line' ? 'bar' : 'line'}`).click();
  await visible(card.locator('figure.chart svg'), 'the chart back');
  log(`the switch draws a ${other} chart and Table hides it`);

  // The table sorts by a numeric column, both ways, from the keyboard.
  const header = table.locator('th.num button').first();
  if ((await header.count()) === 0) fail('the result table has no numeric column to sort by');
  const column = await header.evaluate((b) => [...b.closest('tr').children].indexOf(b.closest('th')));
  const values = () => table.locator(`tbody tr td:nth-child(${column + 1})`).evaluateAll((tds) => tds.map((td) => Number(td.textContent)));
  await header.focus();
  await page.keyboard.press('Enter');
  const ascending = await values();
  if (ascending.some((v, i) => i > 0 && v < ascending[i - 1])) fail(`sorting did not order the column ascending: ${ascending}`);
  if ((await header.locator('xpath=..').getAttribute('aria-sort')) !== 'ascending') fail('aria-sort is not "ascending" after sorting');
  await page.keyboard.press('Enter');
  const descending = await values();
  if (descending.some((v, i) => i > 0 && v > descending[i - 1])) fail(`sorting again did not reverse the column: ${descending}`);
  log('the table sorts numerically both ways from the keyboard');

  // The write waits for approval.
  const approval = page.locator('.card.approval').last();
  await visible(approval.locator('button.approve'), 'an approval card with an Approve button');
  await visible(approval.locator('button.deny'), 'a Deny button');
  await page.locator('.card.tool').first().scrollIntoViewIfNeeded();
  await shot(page, '03-steps.png');
  await card.locator('figure.chart').screenshot({ path: path.join(SHOTS, '04-chart.png') });
  await approval.scrollIntoViewIfNeeded();
  await shot(page, '05-approval.png');
  log('the write waits for approval');

  // Approve: the resumed run streams into the same chat.
  await approval.locator('button.approve').click();
  await visible(page.locator('.card.approval.approved'), 'the approval marked approved');
  const answer = page.locator('.turn.assistant .answer').last();
  await visible(answer, 'the final answer');
  const text = (await answer.innerText()).trim();
  if (!text) fail('the answer is empty');
  if (EXPECT && !text.includes(EXPECT)) fail(`the answer does not contain ${JSON.stringify(EXPECT)}: ${JSON.stringify(text.slice(0, 300))}`);
  if (await page.locator('#send').isDisabled()) fail('the Send button stayed disabled after the run');
  log('approved; the answer streamed in');
  await shot(page, '06-answer.png');

  // Nothing from the data became markup.
  const injected = await page.evaluate(() => document.querySelectorAll('#chat script, #chat iframe, #chat img, #chat foreignObject, #chat [onload], #chat a[href^="javascript"]').length);
  if (injected) fail(`the chat holds ${injected} script/iframe/img elements that did not come from the UI`);

  // A phone: the sidebar folds away behind the menu button.
  await page.setViewportSize({ width: 390, height: 844 });
  if (await page.locator('#sidebar').isVisible()) fail('on a phone the sidebar should be hidden until opened');
  await page.waitForTimeout(200);
  const wide = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, screen: window.innerWidth,
    cards: [...document.querySelectorAll('.card')].filter((c) => c.scrollWidth > c.clientWidth + 1).map((c) => c.className) }));
  if (wide.page > wide.screen) fail(`on a phone the page is ${wide.page} px wide on a ${wide.screen} px screen`);
  if (wide.cards.length) fail(`on a phone these cards overflow: ${wide.cards.join(', ')}`);
  await shot(page, '07-phone.png');
  await page.click('#menu');
  await visible(page.locator('#sidebar'), 'the sidebar after opening the menu on a phone');
  await page.waitForTimeout(300);
  await shot(page, '08-phone-menu.png');
  await page.keyboard.press('Escape');
  await page.setViewportSize({ width: 1280, height: 900 });
  log('the sidebar folds away on a phone');

  // Reload: the token and the conversation come back from the server.
  await page.reload();
  await visible(page.locator('#app'), 'the app after a reload (the token is remembered)');
  await visible(page.locator('#conversations li.current'), 'the current conversation in the sidebar');
  await visible(page.locator('.turn.user .bubble', { hasText: MESSAGE.slice(0, 40) }), 'the message after a reload');
  await visible(page.locator('.turn.assistant .answer'), 'the answer after a reload');
  // The approval card says what was decided, not only that it was.
  await visible(page.locator('.card.approval.approved .decision', { hasText: /^Approved/ }), 'the approval card reading "Approved" after a reload');
  await shot(page, '09-reload.png');
  log('the conversation reloads from the server');

  if (errors.length) fail(`the page logged errors:\n  ${errors.join('\n  ')}`);
  log('no script errors and no Content-Security-Policy violations');
}

main('e2e', run);
