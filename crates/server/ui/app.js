// Steward's web UI: plain JavaScript, no dependencies, no build step. It speaks the HTTP API and the event
// stream of docs/server-api.md. Everything that comes from the server (model text, rows, tool arguments) reaches
// the page as text nodes or attribute values: this file never assigns HTML.
'use strict';

const $ = (id) => document.getElementById(id);
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const NUMBER_SETTINGS = ['temperature', 'max_tokens', 'history', 'max_actions'];
// A conversation's `status` (docs/server-api.md): idle, running, waiting or failed; idle needs no note.
const STATUS_NOTES = { running: 'answering', waiting: 'waiting for approval', failed: 'last answer failed' };
// The `outcome` of an `error` event, as its card's label.
const OUTCOMES = {
  max_steps: 'Step limit reached', token_budget: 'Token budget used up', time_limit: 'Time limit reached',
  model_failed: 'Model failed', cancelled: 'Cancelled', interrupted: 'Interrupted', failed: 'Failed',
};
const state = { token: load('token', null), me: null, conversation: null, conversations: [], busy: false, follow: true, streaming: false, last: '' };

function load(key, fallback) {
  try { const v = localStorage.getItem('steward.' + key); return v === null ? fallback : JSON.parse(v); } catch { return fallback; }
}
function save(key, value) {
  try {
    if (value === null || value === undefined) localStorage.removeItem('steward.' + key);
    else localStorage.setItem('steward.' + key, JSON.stringify(value));
  } catch { /* storage may be off (private mode): settings then last for the page only */ }
}

/** el('p', {class: 'x', text: 'hi', onclick: f}, child…): an element; strings become text nodes. */
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'text') node.textContent = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat(Infinity)) if (child !== null && child !== undefined && child !== false) node.append(child);
  return node;
}

function setStatus(text) { $('status').textContent = text; }
function nearBottom() { const c = $('chat'); return c.scrollHeight - c.scrollTop - c.clientHeight < 80; }
/** Follows the stream to the bottom unless the reader scrolled up to read (state.follow, kept by a scroll listener). */
function scrollDown(force) { const c = $('chat'); if (force || state.follow) { c.scrollTop = c.scrollHeight; state.follow = true; } }
function when(at) {
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return '';
  return d.toDateString() === new Date().toDateString()
    ? d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })
    : d.toLocaleDateString([], { month: 'short', day: 'numeric' });
}

// ---- HTTP ----

async function errorText(response) {
  let text = '';
  try {
    text = await response.text();
    const json = JSON.parse(text);
    // The API answers errors as {"error": message} (docs/server-api.md).
    if (typeof json.error === 'string') text = json.error;
  } catch { /* not JSON: the text as it came */ }
  const what = { 401: 'Not signed in', 403: 'Not allowed', 413: 'Too large', 429: 'Too many requests', 503: 'The server is busy' }[response.status];
  return [what || `Error ${response.status}`, String(text || '').slice(0, 500)].filter(Boolean).join(': ');
}

async function api(method, path, body, accept) {
  const headers = {};
  if (state.token) headers.Authorization = 'Bearer ' + state.token;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (accept) headers.Accept = accept;
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (response.status === 401 && state.token) showSignIn('Your token is no longer accepted; sign in again.');
  if (!response.ok) throw new Error(await errorText(response));
  return response;
}

/** Calls onEvent for each event of a text/event-stream body, as it arrives. */
async function readEvents(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    buffer += decoder.decode(value || new Uint8Array(), { stream: !done });
    let end;
    while ((end = /\r?\n\r?\n/.exec(buffer))) {
      dispatch(buffer.slice(0, end.index), onEvent);
      buffer = buffer.slice(end.index + end[0].length);
    }
    if (done) { if (buffer.trim()) dispatch(buffer, onEvent); return; }
  }
}
function dispatch(block, onEvent) {
  let type = 'message';
  const data = [];
  for (const line of block.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon === 0) continue;
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') type = value; else if (field === 'data') data.push(value);
  }
  if (!data.length) return;
  let event;
  try { event = JSON.parse(data.join('\n')); } catch { return; }
  if (event && typeof event === 'object') onEvent({ type, ...event });
}

// ---- Rendering: SQL, Markdown, tables, charts ----

const SQL_KEYWORDS = new Set(('select from where and or not in is null as on join left right inner outer full cross group by order ' +
  'having limit offset union all distinct case when then else end insert into values update set delete create table ' +
  'view with recursive asc desc between like ilike exists cast over partition returning true false interval extract ' +
  'count sum avg min max coalesce round date strftime filter using natural fetch first rows only').split(' '));
const SQL_TOKEN = /(--[^\n]*|\/\*[\s\S]*?(?:\*\/|$))|('(?:[^']|'')*'?)|("(?:[^"]|"")*"?|`[^`]*`?|\[[^\]\n]*\]?)|(\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b)|([A-Za-z_][A-Za-z0-9_$]*)|(\s+|[^])/gi;

function sqlView(sql) {
  const code = el('code', { class: 'sql' });
  for (const [text, comment, string, quoted, number, word] of String(sql).matchAll(SQL_TOKEN)) {
    const kind = comment ? 'comment' : string ? 'string' : quoted ? 'ident' : number ? 'number'
      : word && SQL_KEYWORDS.has(word.toLowerCase()) ? 'keyword' : null;
    code.append(kind ? el('span', { class: 'tok-' + kind, text }) : text);
  }
  return el('pre', { class: 'code' }, code);
}

/** Copies `text` to the clipboard; `button` says whether it worked. */
async function copy(text, button) {
  const label = button.textContent;
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = 'Copied';
  } catch {
    // No clipboard (an insecure origin, or the permission refused): select the text for Ctrl+C instead.
    button.textContent = 'Press Ctrl+C';
    const area = el('textarea', { class: 'sr-only', 'aria-hidden': 'true' });
    area.value = text;
    document.body.append(area);
    area.select();
    try { document.execCommand('copy'); button.textContent = 'Copied'; } catch { /* said above */ }
    area.remove();
  }
  setTimeout(() => { button.textContent = label; }, 1500);
}

/** SQL a step ran, with Copy and — for a person who may run SQL — Edit and run again (a new message asking the
 *  agent to run the edited query, through the same checks as any message). */
function sqlBlock(sql) {
  const view = sqlView(sql);
  const copyButton = el('button', { type: 'button', class: 'ghost copy-sql', onclick: () => copy(sql, copyButton) }, 'Copy SQL');
  const edit = el('button', { type: 'button', class: 'ghost edit-sql', onclick: () => {
    const area = el('textarea', { class: 'sql-edit', 'aria-label': 'SQL to run', spellcheck: 'false' });
    area.value = sql;
    const run = el('button', { type: 'button', class: 'primary run-sql', onclick: () => {
      const edited = area.value.trim();
      if (!edited) return;
      send(`Run this SQL and show me the result:\n\n\`\`\`sql\n${edited}\n\`\`\``);
    } }, 'Run');
    const cancel = el('button', { type: 'button', class: 'ghost', onclick: () => { form.replaceWith(block); edit.focus(); } }, 'Cancel');
    const form = el('div', { class: 'sql-editor' }, area, el('div', { class: 'tools-row' }, run, cancel));
    block.replaceWith(form);
    area.focus();
  } }, 'Edit and run again');
  const block = el('div', { class: 'sql-block' }, view, el('div', { class: 'tools-row' }, copyButton, edit));
  return block;
}

/** A CSV text of a result (RFC 4180: quoted when needed; NULL as an empty field, an empty text as ""). */
function csv(columns, rows) {
  const field = (v) => {
    if (missing(v)) return '';
    const text = typeof v === 'object' ? JSON.stringify(v) : String(v);
    return text === '' || /[",\r\n]/.test(text) || /^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  return [columns, ...rows].map((row) => row.map(field).join(',')).join('\r\n') + '\r\n';
}

const INLINE = /(`+)([\s\S]*?[^`])\1(?!`)|\*\*(.+?)\*\*|__(.+?)__|\*(\S(?:.*?\S)?)\*|\[([^\]]+)\]\(([^)\s]+)\)/g;
function inline(text) {
  const out = [];
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    out.push(text.slice(last, m.index));
    if (m[1]) out.push(el('code', { text: m[2].trim() }));
    else if (m[3] !== undefined || m[4] !== undefined) out.push(el('strong', null, inline(m[3] ?? m[4])));
    else if (m[5] !== undefined) out.push(el('em', null, inline(m[5])));
    else if (/^(https?:\/\/|mailto:)/i.test(m[7])) out.push(el('a', { href: m[7], target: '_blank', rel: 'noopener noreferrer' }, inline(m[6])));
    else out.push(m[0]);
    last = m.index + m[0].length;
  }
  out.push(text.slice(last));
  return out.filter((part) => part !== '');
}

const LIST_ITEM = /^\s*([-*+]|\d+[.)])\s+(.*)$/;
const TABLE_ROW = /^\s*\|.*\|\s*$/;
const cells = (line) => line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((c) => c.trim());

/** Markdown as DOM: paragraphs, headings, lists, code (SQL highlighted), tables, bold, italic, links. */
function markdown(source) {
  const root = el('div', { class: 'md' });
  const lines = String(source ?? '').replace(/\r\n?/g, '\n').split('\n');
  const startsBlock = (line) => /^\s*(```|~~~|#{1,6}\s)/.test(line) || LIST_ITEM.test(line) || TABLE_ROW.test(line);
  for (let i = 0; i < lines.length;) {
    const line = lines[i];
    let m;
    if (!line.trim()) { i++; } else if ((m = /^\s*(```|~~~)\s*([\w-]*)/.exec(line))) {
      const body = [];
      for (i++; i < lines.length && !lines[i].trim().startsWith(m[1]); i++) body.push(lines[i]);
      i++;
      root.append(/^sql$/i.test(m[2]) ? sqlView(body.join('\n')) : el('pre', { class: 'code' }, el('code', { text: body.join('\n') })));
    } else if ((m = /^(#{1,6})\s+(.*)$/.exec(line))) {
      root.append(el('h' + Math.min(6, m[1].length + 2), null, inline(m[2]))); i++;
    } else if (TABLE_ROW.test(line) && /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/.test(lines[i + 1] || '')) {
      const head = cells(line);
      const body = [];
      for (i += 2; i < lines.length && TABLE_ROW.test(lines[i]); i++) body.push(cells(lines[i]));
      root.append(el('div', { class: 'table-wrap' }, el('table', null,
        el('thead', null, el('tr', null, head.map((c) => el('th', { scope: 'col' }, inline(c))))),
        el('tbody', null, body.map((row) => el('tr', null, head.map((_, c) => el('td', null, inline(row[c] || '')))))))));
    } else if ((m = LIST_ITEM.exec(line))) {
      const ordered = /\d/.test(m[1]);
      const list = el(ordered ? 'ol' : 'ul');
      if (ordered && parseInt(m[1], 10) !== 1) list.setAttribute('start', parseInt(m[1], 10));
      let item = null;
      for (; i < lines.length && lines[i].trim(); i++) {
        const li = LIST_ITEM.exec(lines[i]);
        if (li && /\d/.test(li[1]) === ordered) { item = el('li', null, inline(li[2])); list.append(item); } else if (!li && item) item.append(' ', ...inline(lines[i].trim())); else break;
      }
      root.append(list);
    } else {
      const text = [];
      for (; i < lines.length && lines[i].trim() && (text.length === 0 || !startsBlock(lines[i])); i++) text.push(lines[i].trim());
      root.append(el('p', null, inline(text.join('\n'))));
    }
  }
  return root;
}

const isNumeric = (v) => typeof v === 'number' || (typeof v === 'string' && NUMBER.test(v.trim()));
const missing = (v) => v === null || v === undefined;

/** A result table; each header is a button that sorts by its column (numbers as numbers, nulls last). */
function tableView({ columns = [], rows = [], truncated = false }) {
  const numeric = columns.map((_, c) => rows.some((r) => !missing(r[c])) && rows.every((r) => missing(r[c]) || isNumeric(r[c])));
  const tbody = el('tbody');
  let sorted = { column: -1, direction: 1 };
  const fill = (order) => tbody.replaceChildren(...order.map((row) => el('tr', null, columns.map((_, c) => {
    const v = row[c];
    if (missing(v)) return el('td', { class: 'null', text: 'NULL' });
    return el('td', { class: numeric[c] ? 'num' : null, text: typeof v === 'object' ? JSON.stringify(v) : String(v) });
  }))));
  const headers = columns.map((name, c) => el('th', { scope: 'col', class: numeric[c] ? 'num' : null, 'aria-sort': 'none' },
    el('button', { type: 'button', class: 'sort', onclick: () => sortBy(c) }, String(name), el('span', { class: 'arrow', 'aria-hidden': 'true' }))));
  function sortBy(c) {
    const direction = sorted.column === c ? -sorted.direction : 1;
    sorted = { column: c, direction };
    headers.forEach((th, i) => th.setAttribute('aria-sort', i !== c ? 'none' : direction > 0 ? 'ascending' : 'descending'));
    fill(rows.slice().sort((a, b) => {
      const [x, y] = [a[c], b[c]];
      if (missing(x) || missing(y)) return missing(x) - missing(y);
      return direction * (numeric[c] ? Number(x) - Number(y)
        : String(typeof x === 'object' ? JSON.stringify(x) : x).localeCompare(String(y), undefined, { numeric: true, sensitivity: 'base' }));
    }));
  }
  fill(rows);
  const count = `${rows.length} row${rows.length === 1 ? '' : 's'}${truncated ? ' (more exist; the result was cut)' : ''}`;
  const download = el('button', { type: 'button', class: 'ghost download-csv', onclick: () => {
    const url = URL.createObjectURL(new Blob([csv(columns, rows)], { type: 'text/csv;charset=utf-8' }));
    const link = el('a', { href: url, download: 'result.csv' });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  } }, 'Download CSV');
  return el('div', { class: 'result' },
    el('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': `Result table, ${count}` },
      el('table', { class: 'rows' }, el('thead', null, el('tr', null, headers)), tbody)),
    el('div', { class: 'tools-row' }, el('span', { class: 'muted small', text: count }), download));
}

const SVG_NS = 'http://www.w3.org/2000/svg';
const SVG_TAGS = new Set(['svg', 'g', 'rect', 'line', 'path', 'circle', 'text', 'title', 'desc', 'polyline']);
const SVG_ATTRS = new Set(['x', 'y', 'x1', 'x2', 'y1', 'y2', 'cx', 'cy', 'r', 'rx', 'width', 'height', 'viewBox', 'fill', 'stroke',
  'stroke-width', 'stroke-linejoin', 'stroke-linecap', 'd', 'transform', 'text-anchor', 'dy', 'font-size', 'font-weight',
  'font-family', 'class', 'role']);

/** Whether an attribute's value is one the server's charts use: colours are `#hex` or a name, the rest numbers,
 *  path data, rotations, names; nothing that could name a URL, even through CSS escapes. */
function safeValue(name, value) {
  if (/[\\&<>]|url|javascript|data:|expression/i.test(value)) return false;
  if (name === 'fill' || name === 'stroke') return /^(#[0-9a-f]{3,8}|none|[a-z]+)$/i.test(value);
  return true;
}

/** The server's SVG rebuilt element by element from a short list of drawing elements and attributes (no script,
 *  no link, no style, no event handler can come through), so that it lives in the page: its marks show their
 *  values on hover and on focus. */
function svgFrom(text) {
  let root;
  try { root = new DOMParser().parseFromString(String(text), 'image/svg+xml').documentElement; } catch { return null; }
  if (!root || root.namespaceURI !== SVG_NS || root.localName !== 'svg') return null;
  const copy = (node) => {
    if (node.nodeType === Node.TEXT_NODE) return document.createTextNode(node.nodeValue);
    if (node.nodeType !== Node.ELEMENT_NODE || node.namespaceURI !== SVG_NS || !SVG_TAGS.has(node.localName)) return null;
    const out = document.createElementNS(SVG_NS, node.localName);
    for (const a of node.attributes) if (SVG_ATTRS.has(a.name) && safeValue(a.name, a.value)) out.setAttribute(a.name, a.value);
    for (const child of node.childNodes) { const c = copy(child); if (c) out.append(c); }
    return out;
  };
  return copy(root);
}

/** A chart: the server's SVG in the page, each bar or point showing its value on hover and on keyboard focus. */
function chartView(chart) {
  if (!chart || typeof chart.svg !== 'string') return null;
  const svg = svgFrom(chart.svg);
  if (!svg) return null;
  const title = svg.querySelector('title')?.textContent || `${chart.kind || ''} chart`.trim();
  svg.setAttribute('aria-label', title);
  svg.removeAttribute('width');
  svg.removeAttribute('height');
  const value = el('p', { class: 'chart-value muted small', 'aria-live': 'polite' });
  const marks = [...svg.querySelectorAll('rect.bar, circle.point')];
  const say = (mark) => { value.textContent = mark.querySelector('title')?.textContent || ''; };
  marks.forEach((mark, i) => {
    mark.addEventListener('mouseenter', () => say(mark));
    // Every mark is reachable from the keyboard when there are few; otherwise the first, then arrow keys.
    if (marks.length <= 60 || i === 0) mark.setAttribute('tabindex', '0');
    mark.setAttribute('aria-label', mark.querySelector('title')?.textContent || '');
    mark.addEventListener('focus', () => say(mark));
    mark.addEventListener('keydown', (ev) => {
      const step = ev.key === 'ArrowRight' ? 1 : ev.key === 'ArrowLeft' ? -1 : 0;
      const next = step && marks[i + step];
      if (next) { ev.preventDefault(); next.setAttribute('tabindex', '0'); next.focus(); }
    });
  });
  return el('figure', { class: 'chart', 'data-kind': chart.kind || '' }, svg, value);
}

/** A result: its table and, when the server drew one, its chart, with a switch between table, bar and line
 *  (another kind is drawn by the server, `POST /api/chart`). */
function resultView(table, chart) {
  const rows = table ? tableView(table) : null;
  const figure = chartView(chart);
  if (!figure || !table) return [rows, figure];
  const holder = el('div', { class: 'chart-holder' }, figure);
  const views = ['table', 'bar', 'line'];
  const buttons = views.map((view) => el('button', { type: 'button', class: 'ghost view-' + view, 'aria-pressed': String(view === chart.kind),
    onclick: () => show(view) }, view[0].toUpperCase() + view.slice(1)));
  async function show(view) {
    buttons.forEach((b, i) => b.setAttribute('aria-pressed', String(views[i] === view)));
    holder.hidden = view === 'table';
    if (view === 'table') return;
    const current = holder.querySelector('figure.chart');
    if (current && current.dataset.kind === view) return;
    try {
      const response = await api('POST', '/api/chart', { columns: table.columns, rows: table.rows, kind: view });
      const drawn = chartView({ kind: view, svg: await response.text() });
      if (drawn) holder.replaceChildren(drawn);
    } catch (err) { setStatus(err.message); }
  }
  return [el('div', { class: 'tools-row view-switch', role: 'group', 'aria-label': 'Show the result as' }, buttons), holder, rows];
}

const pretty = (value) => typeof value === 'string' ? value : JSON.stringify(value, null, 2);
/** A call's arguments: its `sql` (the field the server sets on tool_call events and approvals) highlighted, the
 *  rest as labelled fields (an object's scalar values), or as JSON when they are not an object. */
function argumentsView(args, sql) {
  const rest = args && typeof args === 'object' && !Array.isArray(args) ? { ...args } : args;
  if (typeof sql === 'string' && rest && typeof rest === 'object') for (const k of Object.keys(rest)) if (rest[k] === sql) delete rest[k];
  const empty = rest === undefined || rest === null || (typeof rest === 'object' && Object.keys(rest).length === 0);
  return [typeof sql === 'string' ? sqlBlock(sql) : null, empty ? null : fieldsView(rest)];
}

/** An object's fields as a list of labels and values (nested values as JSON); anything else as JSON. */
function fieldsView(value) {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return el('pre', { class: 'code json' }, el('code', { text: pretty(value) }));
  const entries = Object.entries(value).filter(([, v]) => v !== null && v !== undefined);
  return el('dl', { class: 'fields' }, entries.map(([k, v]) => [
    el('dt', { text: k.replace(/_/g, ' ') }),
    el('dd', { text: typeof v === 'object' ? JSON.stringify(v) : String(v) }),
  ]));
}

function card(kind, label, title, ...body) {
  return el('section', { class: 'card ' + kind },
    el('header', { class: 'card-head' }, el('span', { class: 'badge', text: label }), title !== null && title !== undefined ? el('span', { class: 'card-title', text: title }) : null),
    ...body);
}

// ---- One assistant turn: the events of a run, as they arrive ----

class Turn {
  constructor(history, pending) {
    this.history = history;
    this.pending = pending;
    this.calls = new Map();
    this.sqlCalls = new Set();
    this.ranSql = false;
    this.drafts = new Map();
    this.finished = false;
    this.root = el('article', { class: 'turn assistant', 'aria-label': 'Steward' });
    // The steps (thoughts, calls, results) go in a fold, open while the turn runs and folded once it is answered.
    this.summary = el('summary', { text: 'Steps' });
    this.steps = el('details', { class: 'steps', open: true }, this.summary);
    this.stepCount = 0;
    this.root.append(this.steps);
    $('chat').append(this.root);
  }

  add(node, event) {
    if (event && event.parent_run_id) node.classList.add('sub');
    this.root.append(node);
    scrollDown();
    return node;
  }

  /** A step's card, in the fold of steps. */
  step(node, event) {
    if (event && event.parent_run_id) node.classList.add('sub');
    this.stepCount += 1;
    this.steps.append(node);
    scrollDown();
    return node;
  }

  /** Removes the streamed text of one step (`run/step`), of one run (`run/`), or all of it. */
  dropDrafts(key = '') {
    for (const [k, node] of this.drafts) if (key.endsWith('/') ? k.startsWith(key) : !key || k === key) { node.remove(); this.drafts.delete(k); }
  }

  async stream(response) {
    await readEvents(response, (event) => this.handle(event));
    if (!this.finished) this.handle({ type: 'error', message: 'The connection closed before the run finished.' });
  }

  handle(e) {
    const key = `${e.run_id}/${e.step}`;
    switch (e.type) {
      case 'run':
        if (e.parent_run_id) this.step(el('p', { class: 'sub-run muted small', text: `↳ ${e.agent || 'agent'} works on it` }), e);
        break;
      case 'step':
        if (!this.history) setStatus(`Working… (step ${e.step})`);
        break;
      case 'delta': {
        let draft = this.drafts.get(key);
        // Not read out piece by piece: the finished answer or thought that replaces it is.
        if (!draft) { draft = this.add(el('div', { class: 'draft', 'aria-live': 'off' }), e); this.drafts.set(key, draft); }

        draft.append(String(e.text ?? ''));
        scrollDown();
        break;
      }
      case 'thought':
        this.dropDrafts(key);
        if (e.text && e.text.trim()) this.step(card('thought', 'Thought', null, markdown(e.text)), e);
        break;
      case 'tool_call':
        this.calls.set(e.call_id, this.step(card('tool', 'Tool', e.tool, argumentsView(e.arguments, e.sql)), e));
        // SQL the turn runs (run_sql's; query_table's calls are not SQL): an answer after it can be kept as an example.
        if (e.tool === 'run_sql' && typeof e.sql === 'string') this.sqlCalls.add(`${e.run_id}/${e.call_id}`);
        if (!this.history) setStatus(`Calling ${e.tool}…`);
        break;
      case 'observation': {
        // A resumed run's first observation answers a call shown in an earlier turn: it gets its own card.
        const target = this.calls.get(e.call_id) || this.step(card('tool', 'Result', e.tool), e);
        if (e.is_error) target.classList.add('failed');
        else if (this.sqlCalls.has(`${e.run_id}/${e.call_id}`)) this.ranSql = true;
        const content = String(e.content ?? '');
        // A failure is said in the person's words; what the model was told (advice such as "tell the user") stays folded.
        const error = e.is_error ? el('p', { class: 'tool-error', text: String(e.error || content) }) : null;
        const details = el('details', { class: 'observation', open: !e.is_error && !this.calls.has(e.call_id) ? true : null },
          el('summary', { text: e.is_error ? 'What the model was told' : 'Observation' }), el('pre', { class: 'code' }, el('code', { text: content })));
        target.append(...[...resultView(e.table, e.chart), error, content ? details : null].filter(Boolean));
        scrollDown();
        break;
      }
      case 'rejected':
        this.step(card('rejected', 'Rejected', e.tool, el('p', { class: 'tool-error', text: e.error || e.reason || '' })), e);
        break;
      case 'usage':
        // A provider that reports no usage sends zeros: that is not known, not free.
        if (!e.parent_run_id && e.steps > 0) {
          const tokens = e.total_tokens > 0 ? `${e.total_tokens} tokens` : 'tokens unknown (the provider did not report them)';
          this.usage = el('p', { class: 'usage muted small', text: `${tokens} · ${e.steps ?? 0} step${e.steps === 1 ? '' : 's'}` });
        }
        break;
      case 'approval':
        this.dropDrafts();
        for (const approval of e.approvals || []) this.add(approvalCard(approval, !this.history || (this.pending && this.pending.has(approval.id)), this.ranSql), e);
        this.finished = true; // a sub-agent's call waits too: the stream ends here either way
        this.end(e, 'Waiting for your approval.');
        break;
      case 'answer':
        if (e.parent_run_id) {
          this.dropDrafts(`${e.run_id}/`);
          this.step(card('sub-answer', 'Agent answer', null, markdown(e.content)), e);
          break;
        }
        this.dropDrafts();
        this.add(el('div', { class: 'answer' }, markdown(e.content)), e);
        if (this.ranSql && e.run_id) this.add(exampleButton(e.run_id), e);
        this.end(e, 'Answer ready.');
        break;
      case 'error':
        this.dropDrafts();
        const said = e.outcome === 'cancelled' ? 'Stopped before it finished; anything it had staged was discarded.' : e.message;
        this.add(card('error', OUTCOMES[e.outcome] || 'Error', null, el('p', { text: said || 'The run failed.' }),
          this.history || !state.last ? null : retryButton(state.last)), e);
        this.end(e, e.outcome === 'cancelled' ? 'Stopped.' : 'The run failed.');
        break;
      case 'changes':
        this.dropDrafts();
        if (e.change_set) this.add(changeSetCard(e.change_set), e);
        break;
      case 'decided': {
        // Live, the approval card already says what was decided; in a conversation read again, it says so here.
        const target = [...document.querySelectorAll(`.card.approval.decided[data-call="${CSS.escape(String(e.call_id || ''))}"]`)].pop();
        const d = e.decision || {};
        if (target) {
          const what = d.approval === 'approve' ? 'Approved.' : d.approval === 'edit' ? 'Approved with edited arguments.'
            : `Denied${d.reason ? ': ' + d.reason : '.'}`;
          target.classList.add(d.approval === 'reject' ? 'denied' : 'approved');
          target.querySelector('.decision').textContent = what;
        }
        break;
      }
      default:
        break;
    }
  }

  end(e, status) {
    if (e.parent_run_id) return;
    this.finished = true;
    if (this.stepCount) {
      this.summary.textContent = `Steps (${this.stepCount})`;
      // Answered: the steps fold (open them to see the SQL and the rows); waiting or failed: they stay open.
      if (e.type === 'answer') this.steps.open = false;
    } else this.steps.remove();
    if (this.usage) this.root.append(this.usage);
    scrollDown();
    if (!this.history) setStatus(status);
  }
}

/** A thumbs-up ("Good answer") under an answer whose turn ran SQL: saves the question with the last SQL that ran as a verified example
 *  (POST /api/examples with the run's id: the server checks the SQL with the caller's guard and runs it again),
 *  and says so — or why not. */
function exampleButton(runId) {
  const status = el('span', { class: 'example-status muted small', role: 'status' });
  const button = el('button', {
    type: 'button', class: 'ghost save-example', title: 'Good answer: save the question and its SQL as a verified example',
    'aria-label': 'Good answer: save as a verified example',
    onclick: async () => {
      button.disabled = true;
      status.textContent = 'Saving…';
      try {
        await api('POST', '/api/examples', { run_id: runId, source: 'web' });
        status.textContent = 'Saved as an example';
      } catch (err) {
        status.textContent = err.message;
        button.disabled = false;
      }
    },
  }, thumbsUp(), 'Good answer');
  return el('div', { class: 'tools-row example-row' }, button, status);
}

/** A thumbs-up icon, drawn (an emoji needs a font the system may lack). */
function thumbsUp() {
  const NS = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('class', 'icon');
  const hand = document.createElementNS(NS, 'path');
  hand.setAttribute('fill', 'currentColor');
  hand.setAttribute('d', 'M2 21h4V9H2v12zm20-11a2 2 0 0 0-2-2h-6.3l1-4.6v-.3c0-.4-.2-.8-.5-1.1L13.2 1 6.6 7.6C6.2 8 6 8.5 6 9v10a2 2 0 0 0 2 2h9c.8 0 1.5-.5 1.8-1.2l3-7.1c.1-.2.2-.5.2-.7v-2z');
  svg.append(hand);
  return svg;
}

/** Sends `text` again (after an error). */
function retryButton(text) {
  return el('div', { class: 'tools-row' }, el('button', { type: 'button', class: 'retry', onclick: () => send(text) }, 'Retry'));
}

/** `ranSql`: the run ran SQL before it waited (its answer, once resumed, may be kept as an example). */
function approvalCard(a, active, ranSql) {
  const status = el('p', { class: 'decision', role: 'status' });
  const reason = el('input', { type: 'text', class: 'deny-reason', 'aria-label': 'Reason for denying (optional)', placeholder: 'Reason (optional)' });
  const denyForm = el('form', { class: 'deny-form', hidden: true, onsubmit: (ev) => { ev.preventDefault(); decide('deny', reason.value.trim()); } },
    reason, el('button', { type: 'submit', class: 'danger' }, 'Deny'), el('button', { type: 'button', class: 'ghost', onclick: () => { denyForm.hidden = true; buttons.hidden = false; } }, 'Cancel'));
  const approve = el('button', { type: 'button', class: 'primary approve', onclick: () => decide('approve') }, 'Approve');
  const deny = el('button', { type: 'button', class: 'danger deny', onclick: () => { buttons.hidden = true; denyForm.hidden = false; reason.focus(); } }, 'Deny…');
  const buttons = el('div', { class: 'actions' }, approve, deny);
  const node = card('approval', 'Needs approval', a.tool,
    a.reason ? el('p', { class: 'reason', text: a.reason }) : null,
    argumentsView(a.arguments, a.sql),
    // The preview is plain text (what the call would do), never SQL to highlight.
    typeof a.preview === 'string' ? el('div', { class: 'preview' }, el('p', { class: 'muted small', text: 'Preview' }),
      el('pre', { class: 'code' }, el('code', { text: a.preview }))) : null,
    active ? [buttons, denyForm] : null, status);
  node.dataset.approval = a.id;
  node.dataset.call = String(a.call_id || '').split('/').pop();
  if (!active) {
    status.textContent = a.decision ? `${a.decision === 'approve' ? 'Approved' : a.decision === 'deny' ? 'Denied' : 'Edited'}${a.decided_by ? ' by ' + a.decided_by : ''}.` : 'Decided.';
    node.classList.add('decided');
  }

  async function decide(decision, why) {
    if (state.busy) { status.textContent = 'Wait for the current run to finish.'; return; }
    setBusy(true);
    buttons.hidden = true; denyForm.hidden = true;
    status.textContent = decision === 'approve' ? 'Approving…' : 'Denying…';
    try {
      const response = await api('POST', `/api/approvals/${encodeURIComponent(a.id)}`, why ? { decision, reason: why } : { decision }, 'text/event-stream');
      status.textContent = decision === 'approve' ? 'Approved.' : `Denied${why ? ': ' + why : '.'}`;
      node.classList.add(decision === 'approve' ? 'approved' : 'denied');
      const resumed = new Turn();
      resumed.ranSql = Boolean(ranSql);
      if ((response.headers.get('content-type') || '').includes('text/event-stream')) {
        await resumed.stream(response);
      } else {
        const result = await response.json();
        if (result.result) resumed.handle(result.result);
        else if (!result.resumed) setStatus('Decision saved; the run resumes once every pending call is decided.');
      }
    } catch (err) {
      status.textContent = err.message;
      buttons.hidden = false;
    } finally {
      setBusy(false);
      refreshConversations();
    }
  }
  return node;
}

// ---- Change sets: a run's staged writes, applied together or discarded ----

const OPS = { insert: ['+', 'new row'], update: ['~', 'changed'], delete: ['−', 'deleted'] };
const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

/** What became of a decided change set, in a sentence. */
function decidedText(set) {
  const by = set.decided_by ? ` by ${set.decided_by}` : '';
  const at = set.decided_at ? ` ${when(set.decided_at)}` : '';
  if (set.status === 'applied') return `Applied${by}${at}.${set.result ? ' Created: ' + set.result + '.' : ''}`;
  if (set.status === 'discarded') return `Discarded${by}${at}; nothing was written.`;
  if (set.status === 'superseded') return `Replaced by a newer change set with the changes staged since (${set.result || 'see the list of change sets'}); nothing was written from this one.`;
  return '';
}

/** A change set: the rows its calls write, by table, each column before → after, with a box per change to
 *  choose it (every row of a change shares its box); the calls themselves, in order, folded; and Apply all /
 *  Apply selected / Discard. A set decided already says who decided it and when. */
function changeSetCard(set) {
  const changes = set.changes || [];
  const status = el('p', { class: 'decision', role: 'status' });
  // One box per change; the rows it writes show it (a change without rows gets a line of its own).
  const boxes = new Map(changes.map((c) => [c.call_id, []]));
  const box = (callId, label) => {
    const input = el('input', { type: 'checkbox', checked: true, value: callId, 'aria-label': label });
    input.addEventListener('change', () => { for (const other of boxes.get(callId) || []) other.checked = input.checked; selected(); });
    (boxes.get(callId) || boxes.set(callId, []).get(callId)).push(input);
    return input;
  };
  const step = new Map(changes.map((c, i) => [c.call_id, i + 1]));
  const tables = (set.tables || []).map((t) => {
    const counts = {};
    for (const r of t.rows || []) counts[r.op] = (counts[r.op] || 0) + 1;
    const summary = Object.entries(counts).map(([op, n]) => op === 'insert' ? plural(n, 'new row', 'new rows') : `${n} ${(OPS[op] || [op, op])[1]}`).join(', ');
    return el('section', { class: 'diff-table', 'aria-label': `Table ${t.table}` },
      el('h4', null, el('code', { text: t.table }), el('span', { class: 'muted small', text: ` · ${summary}` })),
      el('ul', { class: 'diff' }, (t.rows || []).map((r) => {
        const [mark, label] = OPS[r.op] || ['?', r.op];
        return el('li', { class: 'diff-row ' + r.op },
          el('label', null,
            box(r.call_id, `Change ${r.step}: ${label} ${t.table} ${r.row}`),
            el('span', { class: 'op', title: label, text: mark }),
            el('span', { class: 'step muted small', title: `change ${r.step}`, text: `(${r.step})` }),
            el('span', { class: 'row-name', text: r.row }),
            el('span', { class: 'cols' }, (r.fields || []).map((f) => el('span', { class: 'col' },
              el('span', { class: 'muted', text: `${f.column.replace(/_/g, ' ')}: ` }),
              typeof f.before === 'string' ? el('del', { text: f.before }) : null,
              typeof f.before === 'string' && typeof f.after === 'string' ? el('span', { class: 'arrow', 'aria-label': 'becomes', text: ' → ' }) : null,
              typeof f.after === 'string' ? el('ins', { text: f.after }) : null)))));
      })));
  });
  const rowless = changes.filter((c) => !(boxes.get(c.call_id) || []).length);
  const others = rowless.length ? el('section', { class: 'diff-table' }, el('h4', { text: 'Other changes' }),
    el('ul', { class: 'diff' }, rowless.map((c) => el('li', null, el('label', null,
      box(c.call_id, `Change ${step.get(c.call_id)}: ${c.tool}`),
      el('span', { class: 'step muted small', text: `(${step.get(c.call_id)})` }), el('span', { text: c.result })))))) : null;
  const calls = el('details', { class: 'calls' }, el('summary', { text: `The ${plural(changes.length, 'call', 'calls')}, in order` }),
    el('ol', { class: 'changes' }, changes.map((c) => el('li', null,
      el('strong', { text: c.tool }), ' ', el('span', { class: 'muted small', text: summaryOf(c.arguments) }),
      el('p', { class: 'small result-text', text: c.result })))));
  const chosen = () => changes.map((c) => c.call_id).filter((id) => (boxes.get(id) || []).some((b) => b.checked));
  const applyAll = el('button', { type: 'button', class: 'primary apply-all', onclick: () => decide('apply', null) }, `Apply all ${changes.length}`);
  const applySome = el('button', { type: 'button', class: 'apply-selected', onclick: () => decide('apply', chosen()) }, 'Apply selected');
  const discard = el('button', { type: 'button', class: 'danger discard', onclick: () => decide('discard', null) }, 'Discard');
  const buttons = el('div', { class: 'actions' }, applyAll, applySome, discard);
  function selected() {
    const n = chosen().length;
    applySome.textContent = `Apply selected (${n})`;
    applySome.disabled = n === 0 || n === changes.length;
  }
  selected();
  const reasons = [...new Set(changes.map((c) => c.reason).filter(Boolean))];
  const node = card('changes', 'Change set', '',
    reasons.map((r) => el('p', { class: 'reason small', text: `Needs approval: ${r}.` })),
    tables, others, calls, buttons, status);
  node.dataset.changeSet = set.id;
  const show = (current) => {
    const decided = current.status !== 'waiting';
    buttons.hidden = decided;
    for (const list of boxes.values()) for (const b of list) b.disabled = decided;
    // A decided set shows what was written: the boxes of discarded changes are cleared, their rows struck.
    for (const c of current.changes || []) {
      if (typeof c.applied !== 'boolean') continue;
      for (const b of boxes.get(c.call_id) || []) { b.checked = c.applied; b.closest('li')?.classList.toggle('skipped', !c.applied); }
    }
    node.classList.toggle('applied', current.status === 'applied');
    node.classList.toggle('discarded', current.status === 'discarded');
    const written = (current.changes || []).filter((c) => c.applied === true).length;
    node.querySelector('.card-title').textContent = !decided ? `${plural(changes.length, 'change', 'changes')} · nothing written yet`
      : current.status === 'applied' && written < changes.length ? `${written} of ${changes.length} changes applied`
        : `${plural(changes.length, 'change', 'changes')} · ${current.status}`;
    if (decided) status.textContent = decidedText(current);
  };
  show(set);
  // The set as saved; how it was decided since (here or elsewhere) comes from the server.
  api('GET', `/api/changes/${encodeURIComponent(set.id)}`).then((r) => r.json()).then(show).catch(() => {});

  async function decide(decision, only) {
    buttons.hidden = true;
    status.textContent = decision === 'apply' ? 'Applying in one transaction…' : 'Discarding…';
    try {
      const body = only ? { decision, calls: only } : { decision };
      const result = await (await api('POST', `/api/changes/${encodeURIComponent(set.id)}`, body)).json();
      show(result.change_set);
      refreshChangeSets();
      if (decision === 'apply') {
        const left = changes.length - (result.written ?? 0);
        status.textContent = `${decidedText(result.change_set)} ${plural(result.written ?? 0, 'change', 'changes')} written${left > 0 ? `; ${left} discarded` : ''}.`;
      }
      setStatus(status.textContent);
    } catch (err) {
      status.textContent = err.message;
      buttons.hidden = false;
    }
  }
  return node;
}

/** A call's arguments in one short line: `name: Garden, project id: -1`. */
function summaryOf(args) {
  if (!args || typeof args !== 'object') return args === undefined ? '' : String(args);
  return Object.entries(args).filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => `${k.replace(/_/g, ' ')}: ${typeof v === 'object' ? JSON.stringify(v) : v}`).join(', ');
}

// ---- Conversations ----

function addUser(text) {
  $('chat').append(el('article', { class: 'turn user', 'aria-label': 'You' }, el('div', { class: 'bubble', text })));
  scrollDown(true);
}

function emptyChat() {
  const agent = ((state.me && state.me.agents) || []).find((a) => a.name === $('set-agent').value);
  const starters = (agent && agent.starters) || [];
  $('chat').replaceChildren(el('div', { class: 'empty' }, el('h2', { text: 'What should Steward do?' }),
    el('p', { class: 'muted', text: 'Ask a question about your data or give an instruction. Steward shows each step it takes; changes wait for your approval.' }),
    starters.length ? el('div', { class: 'starters', role: 'group', 'aria-label': 'Questions to start with' },
      starters.map((q) => el('button', { type: 'button', class: 'starter', onclick: () => send(q) }, q))) : null,
    noModelNote()));
}

/** When the server has no model: what works without one, and how to set one. */
function noModelNote() {
  const status = state.me && state.me.model_status;
  if (!status || status.configured) return null;
  return card('error no-model', 'No model', null, el('p', { class: 'pre', text: status.message || 'No model is configured.' }));
}

async function refreshConversations() {
  try { state.conversations = await (await api('GET', '/api/conversations')).json(); } catch (err) { setStatus(err.message); }
  renderConversations();
  refreshChangeSets();
}

/** The change sets that wait for a decision and were not staged in this person's conversations: other
 *  people's sets this person applies (a role's `approve_by`), and sets saved by `steward ask`. */
async function refreshChangeSets() {
  let sets = [];
  try { sets = await (await api('GET', '/api/changes')).json(); } catch { /* the list stays as it was */ return; }
  const mine = state.me && state.me.principal;
  const list = $('change-sets');
  const others = sets.filter((set) => set.status === 'waiting' && set.asked_by !== mine);
  $('change-sets-head').hidden = !others.length;
  list.replaceChildren(...others.map((set) => el('li', null,
    el('button', { type: 'button', class: 'open', onclick: () => openChangeSet(set) },
      el('span', { class: 'name', text: `${set.asked_by || 'someone'} · ${plural((set.changes || []).length, 'change', 'changes')}` }),
      el('span', { class: 'meta muted small', text: [when(set.saved_at), set.agent].filter(Boolean).join(' · ') })))));
}

/** A change set on its own in the main area, to decide. */
function openChangeSet(set) {
  if (state.busy) { setStatus('Wait for the current run to finish.'); return; }
  state.conversation = null;
  save('conversation', null);
  renderConversations();
  toggleSidebar(false);
  $('title').textContent = `Changes asked by ${set.asked_by || 'someone'}`;
  $('chat').replaceChildren(el('article', { class: 'turn assistant', 'aria-label': 'Change set' }, changeSetCard(set)));
}

function renderConversations() {
  const list = $('conversations');
  list.replaceChildren(...state.conversations.map((c) => {
    const current = c.id === state.conversation;
    const title = c.title || 'Untitled';
    return el('li', { class: current ? 'current' : null },
      el('button', { type: 'button', class: 'open', 'aria-current': current ? 'true' : null, onclick: () => openConversation(c.id) },
        el('span', { class: 'name', text: title }),
        el('span', { class: 'meta muted small', text: [when(c.updated_at || c.created_at), STATUS_NOTES[c.status]].filter(Boolean).join(' · ') })),
      el('button', { type: 'button', class: 'ghost delete', 'aria-label': `Delete “${title}”`, title: 'Delete', onclick: () => removeConversation(c) }, '×'));
  }));
  if (!state.conversations.length) list.append(el('li', { class: 'none muted small', text: 'No conversations yet.' }));
}

async function openConversation(id) {
  if (state.busy) { setStatus('Wait for the current run to finish.'); return; }
  state.conversation = id;
  save('conversation', id);
  renderConversations();
  toggleSidebar(false);
  $('chat').replaceChildren(el('p', { class: 'muted small', text: 'Loading…' }));
  try {
    const c = await (await api('GET', `/api/conversations/${encodeURIComponent(id)}`)).json();
    $('chat').replaceChildren();
    $('title').textContent = c.title || 'Steward';
    const pending = new Set((c.pending || []).map((a) => a.id));
    const shown = new Set();
    for (const m of c.messages || []) {
      if (m.role === 'user') { addUser(m.content); continue; }
      const turn = new Turn(true, pending);
      if (Array.isArray(m.events) && m.events.length) {
        for (const e of m.events) {
          turn.handle(e);
          if (e.type === 'approval') for (const a of e.approvals) shown.add(a.id);
        }
        if (!turn.finished && m.content) turn.handle({ type: 'answer', content: m.content });
      } else turn.handle({ type: 'answer', content: m.content });
    }
    const left = (c.pending || []).filter((a) => !shown.has(a.id));
    if (left.length) new Turn(true, pending).handle({ type: 'approval', approvals: left });
    if (!(c.messages || []).length && !left.length) emptyChat();
    scrollDown(true);
  } catch (err) {
    $('chat').replaceChildren(card('error', 'Error', null, el('p', { text: err.message })));
  }
}

function newConversation() {
  if (state.busy) return;
  state.conversation = null;
  save('conversation', null);
  $('title').textContent = 'Steward';
  emptyChat();
  renderConversations();
  toggleSidebar(false);
  $('task').focus();
}

async function removeConversation(c) {
  if (!window.confirm(`Delete “${c.title || 'Untitled'}”? This cannot be undone.`)) return;
  try {
    await api('DELETE', `/api/conversations/${encodeURIComponent(c.id)}`);
    if (c.id === state.conversation) newConversation();
  } catch (err) { setStatus(err.message); }
  refreshConversations();
}

function setBusy(busy) {
  state.busy = busy;
  $('send').disabled = busy;
  $('chat').setAttribute('aria-busy', String(busy));
}

/** While a message is answered, Send becomes Stop. */
function setStreaming(streaming) {
  state.streaming = streaming;
  const button = $('send');
  button.textContent = streaming ? 'Stop' : 'Send';
  button.classList.toggle('stop', streaming);
  button.classList.toggle('primary', !streaming);
  button.type = streaming ? 'button' : 'submit';
  button.setAttribute('aria-label', streaming ? 'Stop the answer' : 'Send');
  if (streaming) button.disabled = false;
}

async function stop() {
  if (!state.streaming || !state.conversation) return;
  setStatus('Stopping…');
  try { await api('POST', `/api/conversations/${encodeURIComponent(state.conversation)}/stop`, {}); } catch (err) { setStatus(err.message); }
}

async function send(given) {
  const box = $('task');
  const text = (typeof given === 'string' ? given : box.value).trim();
  if (!text || state.busy) return;
  state.last = text;
  setBusy(true);
  setStatus('Sending…');
  try {
    const settings = currentSettings();
    if (!state.conversation) {
      const created = await (await api('POST', '/api/conversations', { agent: settings.agent, title: text.slice(0, 80), settings })).json();
      state.conversation = created.id;
      save('conversation', created.id);
      $('chat').replaceChildren();
      $('title').textContent = text.slice(0, 80);
    }
    const response = await api('POST', `/api/conversations/${encodeURIComponent(state.conversation)}/messages`, { content: text, settings }, 'text/event-stream');
    if (typeof given !== 'string' || box.value.trim() === text) box.value = '';
    addUser(text);
    setStreaming(true);
    await new Turn().stream(response);
  } catch (err) {
    $('chat').append(card('error', 'Error', null, el('p', { text: err.message }), retryButton(text)));
    setStatus(err.message);
    scrollDown(true);
  } finally {
    setStreaming(false);
    setBusy(false);
    refreshConversations();
  }
}

// ---- Settings ----

function fillSettings(me) {
  const saved = load('settings', {});
  const agents = me.agents || [];
  $('set-agent').replaceChildren(...agents.map((a) => el('option', { value: a.name, title: a.description || null, text: a.name })));
  $('set-agent').value = agents.some((a) => a.name === saved.agent) ? saved.agent : (me.defaults && me.defaults.agent) || (agents[0] && agents[0].name) || '';
  const defaultModel = me.defaults && me.defaults.model;
  $('set-model').replaceChildren(el('option', { value: '', text: defaultModel ? `Default (${defaultModel})` : 'Default' }),
    ...(me.models || []).filter((name) => name !== defaultModel).map((name) => el('option', { value: name, text: name })));
  $('set-model').value = (me.models || []).includes(saved.model) ? saved.model : '';
  for (const name of NUMBER_SETTINGS) $('set-' + name).value = saved[name] ?? '';
}

function currentSettings() {
  const settings = {};
  if ($('set-agent').value) settings.agent = $('set-agent').value;
  if ($('set-model').value) settings.model = $('set-model').value;
  for (const name of NUMBER_SETTINGS) {
    const raw = $('set-' + name).value.trim();
    if (raw !== '' && Number.isFinite(Number(raw))) settings[name] = name === 'temperature' ? Number(raw) : Math.trunc(Number(raw));
  }
  return settings;
}

// ---- Sign-in and start ----

async function me(token) {
  const response = await fetch('/api/me', { headers: token ? { Authorization: 'Bearer ' + token } : {} });
  if (response.status === 401) return null;
  if (!response.ok) throw new Error(await errorText(response));
  return response.json();
}

function showSignIn(message) {
  state.me = null;
  state.token = null;
  save('token', null);
  $('loading').hidden = true;
  $('app').hidden = true;
  $('signin').hidden = false;
  $('signin-error').textContent = message || '';
  $('token').value = '';
  $('token').focus();
}

async function enter(profile) {
  state.me = profile;
  $('loading').hidden = true;
  $('signin').hidden = true;
  $('app').hidden = false;
  $('signout').hidden = !state.token;
  $('who').textContent = [profile.principal, profile.role].filter(Boolean).join(' · ');
  fillSettings(profile);
  await refreshConversations();
  const last = load('conversation', null);
  if (last && state.conversations.some((c) => c.id === last)) await openConversation(last); else newConversation();
  $('task').focus();
}

function toggleSettings(open) {
  $('settings').hidden = !open;
  $('settings-toggle').setAttribute('aria-expanded', String(open));
  if (open) $('set-agent').focus();
}

function toggleSidebar(open) {
  document.body.classList.toggle('sidebar-open', open);
  $('menu').setAttribute('aria-expanded', String(open));
}

function bind() {
  $('signin-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const token = $('token').value.trim();
    if (!token) { $('signin-error').textContent = 'Enter your access token.'; return; }
    try {
      const profile = await me(token);
      if (!profile) { $('signin-error').textContent = 'That token was not accepted.'; return; }
      state.token = token;
      save('token', token);
      await enter(profile);
    } catch (err) { $('signin-error').textContent = err.message; }
  });
  $('signout').addEventListener('click', () => showSignIn(''));
  $('composer').addEventListener('submit', (ev) => { ev.preventDefault(); send(); });
  $('send').addEventListener('click', (ev) => { if (state.streaming) { ev.preventDefault(); stop(); } });
  $('task').addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && !ev.shiftKey && !ev.isComposing) { ev.preventDefault(); send(); }
  });
  $('new-conversation').addEventListener('click', newConversation);
  $('menu').addEventListener('click', () => toggleSidebar(!document.body.classList.contains('sidebar-open')));
  $('settings-toggle').addEventListener('click', () => toggleSettings($('settings').hidden));
  $('chat').addEventListener('scroll', () => { state.follow = nearBottom(); }, { passive: true });
  $('settings').addEventListener('change', () => save('settings', currentSettings()));
  $('settings').addEventListener('submit', (ev) => ev.preventDefault());
  document.addEventListener('keydown', (ev) => {
    if (ev.key !== 'Escape') return;
    if (!$('settings').hidden) { toggleSettings(false); $('settings-toggle').focus(); } else if (document.body.classList.contains('sidebar-open')) { toggleSidebar(false); $('menu').focus(); }
  });
  // Another agent may start with other questions.
  $('set-agent').addEventListener('change', () => { if (!state.conversation && !state.busy) emptyChat(); });
}

async function start() {
  bind();
  try {
    // An open server answers without a token; otherwise try the saved one, then ask for one.
    let profile = await me(null);
    if (profile) state.token = null; else if (state.token) profile = await me(state.token);
    if (profile) await enter(profile); else showSignIn('');
  } catch (err) {
    $('loading').textContent = `Steward could not start: ${err.message}`;
  }
}

start();
