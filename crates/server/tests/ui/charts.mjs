// Chart choice by the shape of a result, in headless Chromium on a desktop and on a phone. The scripted model
// (see crates/cli/tests/ui.rs) answers one message with five run_sql calls on the demo database, in this order,
// then a text:
//   1. a listing: 60 shipments, their carriers repeating — a table, no chart and no switch;
//   2. shipments per carrier (a category and one measure) — bars;
//   3. orders per month (a time column and one measure) — a line;
//   4. shipments per carrier in 2025 and in 2026 (two measures of one scale) — one axis, two series;
//   5. orders and revenue per category (revenue in thousands) — one panel with two y axes: orders as bars on the
//      left axis, revenue as a line on the right one, each axis's ticks reaching its own measure's largest value;
//      marks of both series say their values on hover and on focus, and the switch redraws it as two lines, still
//      on two axes.
// And the UI's SVG sanitiser keeps what the charts draw (the axes' groups, lines and names) and drops the rest.
//
//   npm ci && STEWARD_URL=… STEWARD_TOKEN=… node charts.mjs
//
// Screenshots (under STEWARD_SCREENSHOTS): charts-<n>-<shape>-desktop.png and charts-<n>-<shape>-phone.png, the page
// with each result's chart (the listing's table) in the middle; charts-5-two-axes-lines-desktop.png, the two-axes
// chart switched to lines; charts-5-two-axes-phone-right.png, scrolled to its right axis on a phone.

import { TOKEN, URL_, fail, log, main, shot, visible } from './harness.mjs';

const SHAPES = ['listing', 'bar', 'line', 'one-axis', 'two-axes'];

/** What a result's card shows: its rows, whether it has a chart and a switch, and what the chart draws. */
function describe(card) {
  return card.evaluate((c) => {
    const figure = c.querySelector('figure.chart');
    const svg = figure && figure.querySelector('svg');
    const all = (selector) => (svg ? [...svg.querySelectorAll(selector)] : []);
    const tick = (text) => {
      const m = /^(-?[\d.]+)([kMBT]?)$/.exec(text.trim());
      return m ? Number(m[1]) * ({ '': 1, k: 1e3, M: 1e6, B: 1e9, T: 1e12 })[m[2]] : NaN;
    };
    // A mark's title: "label · series: value".
    const said = (mark) => /^(.*) · (.*): (.*)$/.exec(mark.querySelector('title')?.textContent || '')?.slice(1) || null;
    return {
      columns: [...c.querySelectorAll('table.rows thead th')].map((th) => th.textContent.trim()),
      rows: [...c.querySelectorAll('table.rows tbody tr')].map((tr) => [...tr.children].map((td) => td.textContent.trim())),
      chart: !!figure,
      switch: !!c.querySelector('.view-switch'),
      kind: figure ? figure.dataset.kind : null,
      panels: all('svg').length,
      axes: all('g.axis').map((g) => ({ side: g.classList.contains('right') ? 'right' : 'left',
        ticks: [...g.querySelectorAll('text:not(.axis-name)')].map((t) => tick(t.textContent)),
        heights: [...g.querySelectorAll('text:not(.axis-name)')].map((t) => Number(t.getAttribute('y'))) })),
      bars: all('rect.bar').map(said),
      points: all('circle.point').map(said),
      lines: all('path.line').length,
      legend: all('g.legend text').map((t) => t.textContent),
    };
  });
}

/** A screenshot of the page with the card's chart (or, without one, its table) in the middle. */
async function capture(page, card, name) {
  await page.mouse.move(1, 1);
  const chart = card.locator('figure.chart');
  const target = (await chart.count()) && (await chart.isVisible()) ? chart : card.locator('.table-wrap');
  await target.evaluate((node) => node.scrollIntoView({ block: 'center' }));
  await shot(page, name);
}

/** The numbers of a table's column `name`, by the row's first cell. */
function column(shape, name) {
  const at = shape.columns.indexOf(name);
  if (at < 0) fail(`the table has no column ${name}: ${shape.columns}`);
  return new Map(shape.rows.map((r) => [r[0], Number(r[at])]));
}

/** Hovers (or focuses) the `index`th of `selector` in the card's chart; returns what the chart then says. */
async function say(card, selector, index, how) {
  const mark = card.locator(`figure.chart svg ${selector}`).nth(index);
  if (how === 'hover') {
    // Low on a bar, where the other series' line and points are least likely to lie over it.
    const box = await mark.boundingBox();
    await mark.hover({ position: { x: box.width / 2, y: Math.max(box.height * 0.85, box.height - 4) } });
  } else {
    await mark.focus();
  }
  return (await card.locator('figure.chart .chart-value').textContent()).trim();
}

/** The said value must be the table's: "label · series: value". */
function agrees(shape, text, series, how) {
  const m = /^(.*) · (.*): (.*)$/.exec(text);
  if (!m || m[2] !== series) fail(`${how} on a ${series} mark said "${text}"`);
  const expected = column(shape, series).get(m[1]);
  if (!(Math.abs(Number(m[3]) - expected) < 1e-6)) fail(`${how}: "${text}", the table says ${expected}`);
}

async function check(cards, where) {
  const shapes = [];
  for (let i = 0; i < SHAPES.length; i += 1) shapes.push(await describe(cards.nth(i)));
  const [listing, bar, line, oneAxis, twoAxes] = shapes;

  if (listing.rows.length !== 60) fail(`the listing shows ${listing.rows.length} rows, not 60`);
  if (listing.chart || listing.switch) fail(`a listing of 60 shipments got a chart (${listing.kind}) or a switch`);
  log(`${where}: a listing of ${listing.rows.length} shipments is a table only`);

  if (bar.kind !== 'bar' || !bar.switch) fail(`shipments per carrier: expected bars and a switch, got ${bar.kind}`);
  if (bar.axes.length !== 1 || bar.bars.length !== bar.rows.length || bar.points.length || bar.legend.length)
    fail(`shipments per carrier: one axis, a bar per row, no legend expected: ${JSON.stringify(bar)}`);
  log(`${where}: a category and one measure draw ${bar.bars.length} bars`);

  if (line.kind !== 'line' || line.lines !== 1 || line.bars.length || line.axes.length !== 1)
    fail(`orders per month: expected one line on one axis: ${JSON.stringify({ ...line, rows: line.rows.length })}`);
  log(`${where}: a time column and one measure draw a line of ${line.points.length} points`);

  const series = (marks) => [...new Set(marks.map((m) => m && m[1]))];
  if (oneAxis.kind !== 'bar' || oneAxis.panels !== 0 || oneAxis.axes.length !== 1 || oneAxis.axes[0].side !== 'left')
    fail(`two measures of one scale: expected bars on one axis: ${JSON.stringify(oneAxis.axes)}, ${oneAxis.panels} nested panels`);
  if (series(oneAxis.bars).length !== 2 || oneAxis.bars.length !== 2 * oneAxis.rows.length || oneAxis.legend.length !== 2)
    fail(`two measures of one scale: expected two series of bars and a legend: ${JSON.stringify(oneAxis.legend)}`);
  if (oneAxis.legend.some((t) => /axis/.test(t))) fail(`one axis, yet the legend names axes: ${oneAxis.legend}`);
  log(`${where}: two measures of one scale share an axis (${oneAxis.legend.join(', ')})`);

  const [left, right] = twoAxes.axes;
  if (twoAxes.kind !== 'bar' || twoAxes.panels !== 0 || twoAxes.axes.length !== 2 || left.side !== 'left' || right.side !== 'right')
    fail(`orders and revenue: expected one panel with a left and a right axis: ${JSON.stringify(twoAxes.axes)}`);
  const orders = Math.max(...column(twoAxes, 'orders').values());
  const revenue = Math.max(...column(twoAxes, 'revenue').values());
  const top = (axis) => Math.max(...axis.ticks);
  if (!(revenue > 10 * orders)) fail(`the data do not make two scales: orders up to ${orders}, revenue up to ${revenue}`);
  if (!(top(left) >= orders && top(left) < revenue / 10)) fail(`the left axis (${left.ticks}) is not the orders' (up to ${orders})`);
  if (!(top(right) >= revenue && top(right) < 2 * revenue)) fail(`the right axis (${right.ticks}) is not the revenue's (up to ${revenue})`);
  if (left.ticks.length < 3 || left.heights.join() !== right.heights.join()) fail(`the axes' ticks are not on the same gridlines: ${left.heights} / ${right.heights}`);
  if (series(twoAxes.bars).join() !== 'orders' || series(twoAxes.points).join() !== 'revenue' || twoAxes.lines !== 1)
    fail(`expected orders as bars and revenue as a line: bars ${series(twoAxes.bars)}, points ${series(twoAxes.points)}`);
  if (!twoAxes.legend.includes('orders (left axis)') || !twoAxes.legend.includes('revenue (right axis)'))
    fail(`the legend does not say which axis is whose: ${twoAxes.legend}`);
  log(`${where}: orders (${left.ticks.join(' ')}) and revenue (${right.ticks.join(' ')}) get two axes`);
  return shapes;
}

async function run(page, errors) {
  await page.goto(URL_);
  await visible(page.locator('#signin:not([hidden]), #app:not([hidden])'), 'the sign-in form or the app');
  if (TOKEN) {
    await page.fill('#token', TOKEN);
    await page.click('#signin button[type=submit]');
  }
  await visible(page.locator('#app'), 'the app');

  // The sanitiser: what the charts draw comes through, nothing else does. (Parsing the hostile SVG makes Chromium
  // report that the page's Content-Security-Policy blocked its handler and style: those reports, and only those,
  // are expected.)
  const before = errors.length;
  const rebuilt = await page.evaluate(() => {
    const svg = svgFrom('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10" onload="alert(1)"><script>alert(1)</script>'
      + '<foreignObject><div>x</div></foreignObject><image href="x.png"/><a href="javascript:alert(1)"><text>a</text></a>'
      + '<use href="#x"/><animate attributeName="x"/><style>*{}</style>'
      + '<rect class="bar" width="2" height="2" style="fill:red" fill="url(#x)" onclick="alert(1)"/>'
      + '<g class="axis right"><line x1="9" x2="9" y1="1" y2="9" stroke="#f28e2b" stroke-width="2"/>'
      + '<text class="axis-name" x="9" y="1" text-anchor="end" font-weight="600" fill="#a4550f">revenue</text></g>'
      + '<circle class="point" cx="1" cy="1" r="4" fill="#f28e2b" stroke="#ffffff" stroke-width="1.5"><title>a · revenue: 1</title></circle></svg>');
    const names = [...svg.querySelectorAll('*')].map((n) => n.localName);
    const attributes = [...svg.querySelectorAll('*'), svg].flatMap((n) => [...n.attributes].map((a) => `${a.name}=${a.value}`));
    return { names, attributes, text: svg.textContent };
  });
  for (const gone of ['script', 'foreignObject', 'image', 'a', 'use', 'animate', 'style', 'div'])
    if (rebuilt.names.includes(gone)) fail(`the sanitiser kept <${gone}>: ${rebuilt.names}`);
  if (rebuilt.attributes.some((a) => /^(on|style|href)|url\(/.test(a))) fail(`the sanitiser kept ${rebuilt.attributes}`);
  for (const kept of ['g', 'line', 'text', 'rect', 'circle', 'title'])
    if (!rebuilt.names.includes(kept)) fail(`the sanitiser dropped <${kept}> a chart draws: ${rebuilt.names}`);
  for (const kept of ['class=axis right', 'class=axis-name', 'stroke=#f28e2b', 'stroke=#ffffff', 'text-anchor=end', 'fill=#a4550f'])
    if (!rebuilt.attributes.includes(kept)) fail(`the sanitiser dropped ${kept}: ${rebuilt.attributes}`);
  if (/alert|x\.png/.test(rebuilt.text) || !rebuilt.text.includes('revenue')) fail(`the sanitiser kept the text "${rebuilt.text}"`);
  await page.waitForTimeout(100);
  const blocked = errors.splice(before);
  if (blocked.some((e) => !/violates the following Content Security Policy directive/.test(e))) fail(`probing the sanitiser: ${blocked.join('\n  ')}`);
  log('the sanitiser keeps the two axes\' elements and drops script, links, styles and handlers');

  // One message, five results.
  await page.fill('#task', 'Show the latest shipments, then shipments by carrier, orders by month, and orders and revenue by category.');
  await page.press('#task', 'Enter');
  await visible(page.locator('.turn.assistant .answer'), 'the answer');
  const fold = page.locator('.turn.assistant details.steps').last();
  if (!(await fold.evaluate((d) => d.open))) await fold.locator(':scope > summary').click();
  const cards = fold.locator('.card.tool');
  await visible(cards.nth(SHAPES.length - 1).locator('table.rows'), `${SHAPES.length} results`);
  if ((await cards.count()) !== SHAPES.length) fail(`expected ${SHAPES.length} results, saw ${await cards.count()}`);

  const shapes = await check(cards, 'desktop');
  const twoAxes = cards.nth(4);
  // Values on hover and on focus, for marks of both series, as the table has them.
  agrees(shapes[4], await say(twoAxes, 'rect.bar', 1, 'hover'), 'orders', 'hovering');
  agrees(shapes[4], await say(twoAxes, 'circle.point', 1, 'hover'), 'revenue', 'hovering');
  agrees(shapes[4], await say(twoAxes, 'rect.bar', 0, 'focus'), 'orders', 'focusing');
  agrees(shapes[4], await say(twoAxes, 'circle.point', 2, 'focus'), 'revenue', 'focusing');
  log('marks of both series say their values on hover and on focus');

  // A call refused for its arguments (the model's sixth, `run_sql` with none) is said in the person's words: which
  // argument is missing, not the model's "Ask the user for them".
  const refused = fold.locator('.card.rejected .tool-error');
  await visible(refused, 'the refused call');
  const refusal = (await refused.textContent()).trim();
  if (!/do not fit its parameters/.test(refusal) || !/missing: sql/.test(refusal) || /the user/i.test(refusal))
    fail(`the refusal is not said to the person: ${JSON.stringify(refusal)}`);
  log(`a refused call is said to the person: ${JSON.stringify(refusal)}`);
  for (let i = 0; i < SHAPES.length; i += 1) {
    await capture(page, cards.nth(i), `charts-${i + 1}-${SHAPES[i]}-desktop.png`);
  }

  // The switch: lines, still on two axes; Table hides the chart; Bar brings the bars back.
  await twoAxes.locator('button.view-line').click();
  await visible(twoAxes.locator('figure.chart[data-kind="line"] svg'), 'the two-axes chart redrawn as lines');
  const lines = await describe(twoAxes);
  if (lines.axes.map((a) => a.side).join() !== 'left,right' || lines.lines !== 2 || lines.bars.length)
    fail(`as lines: expected two lines on two axes: ${JSON.stringify(lines.axes)}, ${lines.lines} lines, ${lines.bars.length} bars`);
  agrees(lines, await say(twoAxes, 'circle.point', 0, 'focus'), 'orders', 'focusing');
  agrees(lines, await say(twoAxes, 'circle.point', lines.points.length - 1, 'hover'), 'revenue', 'hovering');
  await capture(page, twoAxes, 'charts-5-two-axes-lines-desktop.png');
  await twoAxes.locator('button.view-table').click();
  if (await twoAxes.locator('figure.chart').isVisible()) fail('Table did not hide the chart');
  await twoAxes.locator('button.view-bar').click();
  await visible(twoAxes.locator('figure.chart[data-kind="bar"] svg'), 'the bars back');
  if ((await twoAxes.locator('button.view-bar').getAttribute('aria-pressed')) !== 'true') fail('Bar is not pressed');
  if ((await describe(twoAxes)).axes.length !== 2) fail('the bars came back without their two axes');
  log('the switch draws two lines on two axes, hides the chart, and brings the bars back');

  // A phone: the same choices; the page stays within the screen; marks still say their values on focus.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(200);
  await check(cards, 'phone');
  const wide = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, screen: window.innerWidth,
    cards: [...document.querySelectorAll('.card')].filter((c) => c.scrollWidth > c.clientWidth + 1).map((c) => c.className) }));
  if (wide.page > wide.screen) fail(`on a phone the page is ${wide.page} px wide on a ${wide.screen} px screen`);
  if (wide.cards.length) fail(`on a phone these cards overflow: ${wide.cards.join(', ')}`);
  for (let i = 0; i < SHAPES.length; i += 1) {
    await capture(page, cards.nth(i), `charts-${i + 1}-${SHAPES[i]}-phone.png`);
  }
  // Focus reaches the last revenue point, at the right axis, scrolling the chart to it.
  agrees(shapes[4], await say(twoAxes, 'circle.point', shapes[4].points.length - 1, 'focus'), 'revenue', 'focusing on a phone');
  const figure = twoAxes.locator('figure.chart');
  await figure.evaluate((f) => { f.scrollLeft = f.scrollWidth; });
  await capture(page, twoAxes, 'charts-5-two-axes-phone-right.png');
  log('on a phone: the same choices, nothing wider than the screen, values on focus');

  if (errors.length) fail(`the page logged errors:\n  ${errors.join('\n  ')}`);
}

main('charts', run);
