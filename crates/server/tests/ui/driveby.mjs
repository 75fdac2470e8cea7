// Drive-by attacks on a Steward server from web pages in headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core): what a page on another site can make a visitor's browser do to a server on the visitor's
// machine that needs no credentials.
//
//   npm ci && STEWARD_URL=http://127.0.0.1:8080 node driveby.mjs
//
// 1. Cross-site requests: a page served from another loopback address (http://127.0.0.2:PORT, another site)
//    sends `fetch(…, {mode: 'no-cors'})` POSTs with `text/plain` bodies (no CORS preflight), a CORS fetch with a
//    JSON body (needs a preflight), and form POSTs (urlencoded, and `text/plain` carrying a JSON body) to
//    /api/conversations and /v1/chat/completions.
// 2. DNS rebinding: a page at http://evil.example:STEWARD_PORT/ (the browser resolves evil.example to 127.0.0.1,
//    as a rebinding DNS server would after the page loaded) reads /api/me and /api/runs and posts JSON to
//    /v1/chat/completions, /api/conversations and /mcp as same-origin requests. Each must answer 421.
// 3. The control: the server's own page posts JSON to /api/conversations (title "own page") and gets 201.
//
// The caller checks over HTTP that nothing but the control's conversation was created (no run, no expense, no
// model call). Prints what each request got; exit status 0 when the browser-side expectations held, 1 with
// "DRIVE-BY FAILED: …" otherwise, 2 when it could not start.

import { createServer } from 'node:http';
import { chromium } from 'playwright-core';

const URL_ = process.env.STEWARD_URL;
const BROWSER = process.env.STEWARD_CHROMIUM || '/usr/bin/chromium';
const TIMEOUT = Number(process.env.STEWARD_TIMEOUT_MS || 30000);

if (!URL_) {
  console.error('DRIVE-BY SETUP: set STEWARD_URL to the server (e.g. http://127.0.0.1:8080)');
  process.exit(2);
}
const PORT = new URL(URL_).port;
const REBOUND = `http://evil.example:${PORT}`;
const CHAT = JSON.stringify({ model: 'books', messages: [{ role: 'user', content: 'Add a 12.50 taxi ride' }] });

// Every expectation that did not hold; the script goes on, so that the caller also sees what was created.
const failures = [];
const fail = (message) => { failures.push(message); };

/** The attacker's cross-site page: fires every request, then sets `window.done` to what it saw. */
function crossSitePage() {
  const target = JSON.stringify(URL_);
  // A text/plain form whose body is `{"model":…,"pad":"="}`: valid JSON from a plain HTML form.
  const name = CHAT.slice(0, -1) + ',"pad":"';
  return `<!doctype html><meta charset="utf-8"><title>cats</title>
<iframe name="sink1"></iframe><iframe name="sink2"></iframe>
<form id="f1" method="POST" target="sink1" action=${JSON.stringify(URL_ + '/api/conversations')}>
  <input name="title" value="csrf form"></form>
<form id="f2" method="POST" target="sink2" enctype="text/plain" action=${JSON.stringify(URL_ + '/v1/chat/completions')}>
  <input name='${name.replace(/'/g, '&#39;')}' value='"}'></form>
<script>
(async () => {
  const base = ${target};
  const seen = {};
  const attempt = async (what, url, init) => {
    try { const r = await fetch(url, init); seen[what] = r.type === 'opaque' ? 'sent (opaque)' : r.status; }
    catch (e) { seen[what] = 'blocked: ' + e.message; }
  };
  await attempt('no-cors text/plain /api/conversations', base + '/api/conversations',
    { method: 'POST', mode: 'no-cors', headers: { 'Content-Type': 'text/plain' }, body: '{"title":"csrf"}' });
  await attempt('no-cors text/plain /v1/chat/completions', base + '/v1/chat/completions',
    { method: 'POST', mode: 'no-cors', headers: { 'Content-Type': 'text/plain' }, body: ${JSON.stringify(CHAT)} });
  await attempt('no-cors text/plain /mcp', base + '/mcp',
    { method: 'POST', mode: 'no-cors', headers: { 'Content-Type': 'text/plain' },
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_expense","arguments":{}}}' });
  await attempt('cors application/json /v1/chat/completions', base + '/v1/chat/completions',
    { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: ${JSON.stringify(CHAT)} });
  const loaded = (frame) => new Promise((resolve) => { frame.onload = resolve; setTimeout(resolve, 5000); });
  const frames = [...document.querySelectorAll('iframe')];
  const waits = frames.map(loaded);
  document.getElementById('f1').submit();
  document.getElementById('f2').submit();
  await Promise.all(waits);
  seen['form posts'] = 'submitted';
  window.done = seen;
})();
</script>`;
}

/** The rebinding page: same-origin requests to whatever evil.example now resolves to. */
const REBINDING_PAGE = `<!doctype html><meta charset="utf-8"><title>dogs</title><script>
(async () => {
  const seen = {};
  const attempt = async (what, url, init) => {
    try { const r = await fetch(url, init); seen[what] = r.status + ' ' + (await r.text()).slice(0, 160); }
    catch (e) { seen[what] = 'blocked: ' + e.message; }
  };
  const json = (body) => ({ method: 'POST', headers: { 'Content-Type': 'application/json' }, body });
  await attempt('GET /api/me', '/api/me');
  await attempt('GET /api/runs', '/api/runs');
  await attempt('POST /v1/chat/completions', '/v1/chat/completions', json(${JSON.stringify(CHAT)}));
  await attempt('POST /api/conversations', '/api/conversations', json('{"title":"rebound"}'));
  await attempt('POST /mcp', '/mcp', { ...json('{"jsonrpc":"2.0","id":1,"method":"tools/list"}'),
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' } });
  window.done = seen;
})();
</script>`;

async function results(page) {
  await page.waitForFunction(() => window.done, null, { timeout: TIMEOUT });
  return page.evaluate(() => window.done);
}

async function run(context, attackerUrl) {
  // 1. Cross-site.
  const page = await context.newPage();
  await page.goto(attackerUrl);
  const crossSite = await results(page);
  console.log(`cross-site page at ${attackerUrl}:`);
  for (const [what, got] of Object.entries(crossSite)) console.log(`  ${what}: ${got}`);
  if (!String(crossSite['cors application/json /v1/chat/completions']).startsWith('blocked')) {
    fail('a cross-site CORS request with a JSON body was let through');
  }
  await page.close();

  // 2. DNS rebinding: the page itself comes from the attacker; what it fetches goes to 127.0.0.1.
  const rebound = await context.newPage();
  await rebound.route(`${REBOUND}/`, (route) => route.fulfill({ contentType: 'text/html', body: REBINDING_PAGE }));
  await rebound.goto(`${REBOUND}/`);
  const rebinding = await results(rebound);
  console.log(`rebinding page at ${REBOUND}/:`);
  for (const [what, got] of Object.entries(rebinding)) {
    console.log(`  ${what}: ${got}`);
    if (!String(got).startsWith('421 ')) fail(`${what} from the rebinding page got ${got}, not 421`);
  }
  await rebound.close();

  // 3. The server's own page may post.
  const own = await context.newPage();
  const origins = [];
  own.on('request', async (r) => {
    if (r.method() === 'POST') origins.push((await r.allHeaders()).origin || '(none)');
  });
  await own.goto(URL_);
  const status = await own.evaluate(async () => (await fetch('/api/conversations', {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"title":"own page"}',
  })).status);
  console.log(`the server's own page: POST /api/conversations ${status} (Origin: ${origins.join(', ')})`);
  if (status !== 201) fail(`the server's own page could not create a conversation: ${status}`);
  await own.close();
}

async function main() {
  const attacker = createServer((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(crossSitePage());
  });
  await new Promise((resolve, reject) => {
    attacker.once('error', reject);
    attacker.listen(0, '127.0.0.2', resolve);
  });
  const attackerUrl = `http://127.0.0.2:${attacker.address().port}/`;
  let browser;
  try {
    browser = await chromium.launch({
      executablePath: BROWSER,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic', '--no-first-run',
        '--disable-component-update', '--disable-sync', '--host-resolver-rules=MAP evil.example 127.0.0.1',
        // The rebinding page comes from `route.fulfill`, not from an address: without these, Chromium's own
        // local-network checks stop its requests before they reach the server, which other browsers do not.
        '--disable-features=LocalNetworkAccessChecks,BlockInsecurePrivateNetworkRequests,PrivateNetworkAccessSendPreflights,PrivateNetworkAccessRespectPreflightResults'],
    });
  } catch (err) {
    console.error(`DRIVE-BY SETUP: could not start ${BROWSER}: ${err.message.split('\n')[0]}`);
    attacker.close();
    process.exit(2);
  }
  let status = 0;
  try {
    await run(await browser.newContext(), attackerUrl);
  } catch (err) {
    failures.push(err.stack || String(err));
  } finally {
    if (failures.length) {
      status = 1;
      console.error(`DRIVE-BY FAILED: ${failures.join('\n  ')}`);
    } else {
      console.log('DRIVE-BY PASSED');
    }
    await browser.close().catch(() => {});
    attacker.close();
  }
  process.exit(status);
}

main();
