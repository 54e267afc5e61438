// DOM helpers. Every piece of data reaches the page as a text node or an attribute value set through
// the DOM API: nothing is ever parsed as HTML, so a fact, an index name or an owner cannot inject markup.

const SVG_NS = 'http://www.w3.org/2000/svg';
/** Attributes a caller may set (never an event handler, never `style`, never `href` to script). */
const SAFE_ATTR = /^(?:class|id|role|tabindex|title|type|name|value|for|hidden|disabled|colspan|scope|min|max|low|high|optimum|step|placeholder|autocomplete|spellcheck|lang|datetime|data-[a-z-]+|aria-[a-z]+|x|y|x1|x2|y1|y2|cx|cy|r|d|points|width|height|viewBox|preserveAspectRatio|focusable|text-anchor|dominant-baseline|transform)$/;

function build(doc, ns, tag, attrs, children) {
  const el = ns ? doc.createElementNS(ns, tag) : doc.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (!SAFE_ATTR.test(k)) throw new Error(`attribute ${k} is not allowed`);
    el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** An HTML element: `h('td', { class: 'num' }, 'text', child)`. */
export const h = (tag, attrs, ...children) => build(document, null, tag, attrs, children);
/** An SVG element. */
export const s = (tag, attrs, ...children) => build(document, SVG_NS, tag, attrs, children);

export const $ = (id) => document.getElementById(id);

/** Replaces an element's children. */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
}

/** Sets text only when it changed (no needless layout work). */
export function setText(el, text) {
  const t = String(text);
  if (el.textContent !== t) el.textContent = t;
}

/**
 * Keeps `tbody`'s rows in the order of `items`, one row per key: new rows are created, existing rows
 * updated in place (focus and hover survive a refresh), rows of vanished items removed.
 */
export function syncRows(tbody, items, key, create, update) {
  const existing = new Map([...tbody.children].map((tr) => [tr.dataset.key, tr]));
  let prev = null;
  for (const item of items) {
    const k = key(item);
    let tr = existing.get(k);
    if (tr) existing.delete(k);
    else {
      tr = create(item);
      tr.dataset.key = k;
    }
    update(tr, item);
    const want = prev ? prev.nextSibling : tbody.firstChild;
    if (want !== tr) tbody.insertBefore(tr, want);
    prev = tr;
  }
  for (const tr of existing.values()) tr.remove();
}

/** `1m 05s`, `3h 02m`, `12s`, `850 ms`. */
export function duration(ms) {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  const neg = ms < 0;
  let v = Math.abs(ms);
  if (v < 1000) return `${neg ? '-' : ''}${Math.round(v)} ms`;
  v = Math.floor(v / 1000);
  const d = Math.floor(v / 86400), hr = Math.floor((v % 86400) / 3600), m = Math.floor((v % 3600) / 60), sec = v % 60;
  const two = (n) => String(n).padStart(2, '0');
  const out = d ? `${d}d ${two(hr)}h` : hr ? `${hr}h ${two(m)}m` : m ? `${m}m ${two(sec)}s` : `${sec}s`;
  return neg ? `-${out}` : out;
}

/** Local date and time with seconds, or `—`. */
export function when(ms) {
  if (ms === null || ms === undefined) return '—';
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? '—' : d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/** A `<time>` with the ISO instant in its datetime and title. */
export function time(ms, text) {
  if (ms === null || ms === undefined) return '—';
  const iso = new Date(ms).toISOString();
  return h('time', { datetime: iso, title: iso }, text ?? when(ms));
}

/** `bob (native)`, `bob (API key abc)`, or a note when there is no owner (security off). */
export function ownerLabel(o) {
  if (!o) return '(no owner)';
  if (o.realm && o.realm.startsWith('_es_api_key/')) return `${o.username} (API key ${o.realm.slice(12)})`;
  return o.realm ? `${o.username} (${o.realm})` : o.username;
}

/** Announces a short message to screen readers. */
export function announce(text) {
  const el = $('announce');
  el.textContent = '';
  setTimeout(() => (el.textContent = text), 50);
}

/** A badge with the status as text (colour is never the only signal). */
export const badge = (status) => h('span', { class: `badge ${status}` }, status);

const TIME_FIELDS = /^(?:at|creation|expiration|invalidation|createdAt|refreshedAt|accessExpiresAt|refreshExpiresAt)$/;
/** A fact field for people: epoch-ms fields as ISO times, keep-alives as durations, objects as owners or JSON. */
export function fieldText(key, v) {
  if (typeof v === 'number' && TIME_FIELDS.test(key)) return new Date(v).toISOString();
  if (typeof v === 'number' && key === 'keepAliveMs') return duration(v);
  if (key === 'total' && v && typeof v.value === 'number') return `${v.value}${v.relation === 'gte' ? '+' : ''} hits`;
  if (v && typeof v === 'object') return typeof v.username === 'string' ? ownerLabel(v) : JSON.stringify(v);
  return String(v);
}
