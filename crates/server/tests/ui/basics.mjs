// The web UI's everyday controls in headless Chromium: starter questions on an empty conversation, the steps of
// an answered turn folded, Copy SQL, Download CSV (its content), Edit and run again, Stop a running turn and
// Retry it, thumbs-up saving an answer as a verified example (and saying why not a second time), "tokens unknown"
// when the provider reports none, Escape closing the settings, the default model
// named in the settings, the dark theme, and the empty conversation on a phone.
//
//   npm ci && STEWARD_URL=… STEWARD_TOKEN=… STEWARD_CSV=… STEWARD_EDITED=… node basics.mjs
//
// STEWARD_CSV: the CSV the first result must download as (the test's own query of the database, in RFC 4180).
// STEWARD_EDITED: the SQL to type into "Edit and run again". STEWARD_MODEL_SHOWN: what the model setting's
// default must name. The scripted model (see crates/cli/tests/ui.rs) answers the starter with one run_sql call
// and a text, the edited SQL with one call and a text without usage, then takes long enough to be stopped, and
// answers the retry with a text.

import { readFile } from 'node:fs/promises';
import { SHOTS, TIMEOUT, TOKEN, URL_, fail, log, main, shot, visible } from './harness.mjs';

const CSV = process.env.STEWARD_CSV || '';
const EDITED = process.env.STEWARD_EDITED || '';
const MODEL_SHOWN = process.env.STEWARD_MODEL_SHOWN || '';

async function run(page, errors) {
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: URL_ });
  await page.goto(URL_);
  await visible(page.locator('#signin:not([hidden]), #app:not([hidden])'), 'the sign-in form or the app');
  if (TOKEN) {
    await page.fill('#token', TOKEN);
    await page.click('#signin button[type=submit]');
  }
  await visible(page.locator('#app'), 'the app');

  // The settings: the default model is named; Escape closes them.
  await page.click('#settings-toggle');
  await visible(page.locator('#settings'), 'the settings');
  const model = await page.locator('#set-model option').first().textContent();
  if (MODEL_SHOWN && !model.includes(MODEL_SHOWN)) fail(`the model setting's default says "${model}", not ${MODEL_SHOWN}`);
  log(`the model setting's default: ${model}`);
  await shot(page, 'basics-01-settings.png');
  await page.keyboard.press('Escape');
  if (await page.locator('#settings').isVisible()) fail('Escape did not close the settings');
  if ((await page.evaluate(() => document.activeElement && document.activeElement.id)) !== 'settings-toggle') fail('focus did not return to Settings');
  log('Escape closes the settings and gives focus back');

  // An empty conversation offers starter questions, on a desktop and a phone.
  const starters = page.locator('.empty .starters button');
  await visible(starters, 'starter questions');
  const count = await starters.count();
  if (count < 2) fail(`only ${count} starter question(s)`);
  await shot(page, 'basics-02-empty-desktop.png');
  await page.setViewportSize({ width: 390, height: 844 });
  await shot(page, 'basics-03-empty-phone.png');
  const narrow = await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1);
  if (!narrow) fail('the empty conversation is wider than a phone');
  await page.setViewportSize({ width: 1280, height: 900 });
  log(`${count} starter questions, on desktop and phone`);

  // A starter sends itself; the answer comes with its steps folded.
  const question = await starters.nth(1).textContent();
  await starters.nth(1).click();
  await visible(page.locator('.turn.user .bubble', { hasText: question }), 'the starter as the user message');
  const answer = page.locator('.turn.assistant .answer').last();
  await visible(answer, 'the answer');
  const fold = page.locator('.turn.assistant details.steps').last();
  if (await fold.evaluate((d) => d.open)) fail('the steps of an answered turn are not folded');
  const summary = await fold.locator(':scope > summary').textContent();
  if (!/^Steps \(\d+\)$/.test(summary.trim())) fail(`the fold says "${summary}"`);
  log(`the answer came; its ${summary} are folded`);
  await fold.locator(':scope > summary').click();
  await visible(fold.locator('table.rows'), 'the result table in the opened fold');

  // Copy SQL puts the step's SQL on the clipboard.
  await fold.locator('button.copy-sql').first().click();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  const shownSql = await fold.locator('pre.code code.sql').first().textContent();
  if (copied !== shownSql) fail(`Copy SQL copied "${copied}", the step shows "${shownSql}"`);
  log('Copy SQL copies the SQL the step ran');

  // Download CSV: the file holds exactly the rows.
  const [download] = await Promise.all([page.waitForEvent('download', { timeout: TIMEOUT }), fold.locator('button.download-csv').first().click()]);
  const file = await download.path();
  const content = await readFile(file, 'utf8');
  if (CSV && content !== CSV) fail(`the CSV differs:\n${JSON.stringify(content)}\nexpected\n${JSON.stringify(CSV)}`);
  if (download.suggestedFilename() !== 'result.csv') fail(`the download is named ${download.suggestedFilename()}`);
  log(`Download CSV gives the rows (${content.split('\r\n').length - 2} rows and a header)`);
  await shot(page, 'basics-04-answer-table.png');

  // Edit and run again: the edited SQL goes out as a new message, and its result comes back.
  await fold.locator('button.edit-sql').first().click();
  const editor = page.locator('textarea.sql-edit');
  await visible(editor, 'the SQL editor');
  await editor.fill(EDITED);
  await page.locator('button.run-sql').click();
  await visible(page.locator('.turn.user .bubble', { hasText: EDITED }), 'the edited SQL as a new message');
  await visible(page.locator('.turn.assistant .answer').nth(1), 'the answer to the edited SQL');
  log('Edit and run again sent the edited SQL and got its answer');

  // thumbs-up on an answer that ran SQL saves its question and SQL as a verified example; saving it again says why not.
  const first = page.locator('.turn.assistant').first();
  await first.locator('button.save-example').click();
  await visible(first.locator('.example-status', { hasText: 'Saved as an example' }), '"Saved as an example" under the first answer');
  if (!(await first.locator('button.save-example').isDisabled())) fail('the thumbs-up stays enabled once the example is saved');
  await shot(page, 'basics-05-example-saved.png');
  log('thumbs-up saves the answer as a verified example');

  // Stop a turn while the model thinks; Retry sends it again.
  await page.fill('#task', 'Count every order, slowly');
  await page.press('#task', 'Enter');
  const stop = page.locator('#send.stop');
  await visible(stop, 'the Stop button');
  if ((await stop.textContent()).trim() !== 'Stop') fail('the send button does not say Stop');
  await shot(page, 'basics-05-running.png');
  await stop.click();
  const cancelled = page.locator('.card.error', { hasText: /Cancelled/ }).last();
  await visible(cancelled, 'the stopped turn');
  await visible(page.locator('#send:not(.stop)'), 'Send back after Stop');
  log('Stop ends the running turn');
  await cancelled.locator('button.retry').click();
  await visible(page.locator('.turn.assistant .answer', { hasText: 'There are many orders' }), 'the retried answer');
  log('Retry sends the question again and gets its answer');
  if (await page.locator('.turn.assistant').last().locator('button.save-example').count()) fail('a turn that ran no SQL offers thumbs-up');
  log('a turn that ran no SQL offers no thumbs-up');
  const usage = await page.locator('.turn.assistant .usage').last().textContent();
  if (!/tokens unknown/.test(usage)) fail(`a turn whose provider reported no usage says "${usage}"`);
  log(`usage without a report says "${usage}"`);

  // Dark, as the system says.
  await page.emulateMedia({ colorScheme: 'dark' });
  const background = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
  const [r, g, b] = background.match(/\d+/g).map(Number);
  if (r + g + b > 150) fail(`the dark theme's background is ${background}`);
  await shot(page, 'basics-06-dark.png');
  await page.emulateMedia({ colorScheme: 'light' });
  log(`the dark theme follows the system (${background})`);

  // Read again, the first answer offers thumbs-up still; the example is saved already, and the error says so.
  await page.reload();
  await visible(page.locator('.turn.assistant .answer'), 'the answers after a reload');
  const again = page.locator('.turn.assistant').first();
  await again.locator('button.save-example').click();
  await visible(again.locator('.example-status', { hasText: /saved already/ }), 'the error of saving the same example twice');
  log(`saving it again says: ${(await again.locator('.example-status').textContent()).trim()}`);
  // The browser logs the refused request itself (a 409): that is the answer shown, not a script error.
  const refusal = errors.findIndex((e) => /status of 409/.test(e));
  if (refusal >= 0) errors.splice(refusal, 1);
  if (errors.length) fail(`page errors: ${errors.join('; ')}`);
}

main('basics', run);
