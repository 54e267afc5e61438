// "Live": lifecycle facts as they happen, from the node's server-sent events (a NATS subscription on
// es.v1.evt.> behind it). The server sends only what the user may see; the filters here narrow it.
import { $, h, replace, setText, ownerLabel, announce, fieldText } from './dom.js';

const KEEP = 500;
const SHOW = 200;
const TIMELINE_KINDS = new Set(['scroll', 'pit', 'apikey', 'token', 'servicetoken']);

export function createLive(ctx) {
  const { stream, ApiError } = ctx.api;
  /** Listeners on the page's fixed elements end with the session (ctx.signal), not with the page. */
  const on = (el, type, fn) => el.addEventListener(type, fn, { signal: ctx.signal });
  const entries = [];
  let received = 0;
  let paused = false;
  let visible = false;
  let controller = null;
  let stopped = false;
  let retryMs = 1000;
  let fresh = []; // received since the last draw
  let flushing = null;

  const form = $('feed-filters');
  const select = form.elements.aggregate;
  replace(select, h('option', { value: '' }, 'all'), ctx.session.aggregates.map((a) => h('option', { value: a }, a)));
  on(form, 'input', () => render());
  on(form, 'submit', (ev) => ev.preventDefault());
  const pause = $('feed-pause');
  pause.setAttribute('aria-pressed', 'false');
  setText(pause, 'Pause');
  on(pause, 'click', () => {
    paused = !paused;
    pause.setAttribute('aria-pressed', String(paused));
    setText(pause, paused ? 'Resume' : 'Pause');
    if (!paused) render();
  });
  on($('feed-clear'), 'click', () => {
    entries.length = 0;
    render();
  });

  function status(text) {
    setText($('feed-status'), text);
  }

  function filter() {
    const f = form.elements;
    const agg = f.aggregate.value;
    const owner = f.owner.value.trim().toLowerCase();
    const index = f.index.value.trim().toLowerCase();
    return (e) =>
      (!agg || e.aggregate === agg) &&
      (!owner || ownerLabel(e.owner).toLowerCase().includes(owner)) &&
      (!index || e.indices.some((i) => i.toLowerCase().includes(index)));
  }

  const clock = (iso) => {
    const d = new Date(iso);
    return `${d.toLocaleTimeString(undefined, { hour12: false })}.${String(d.getMilliseconds()).padStart(3, '0')}`;
  };

  function details(e) {
    const parts = [];
    if (e.owner) parts.push(h('span', {}, `owner ${ownerLabel(e.owner)}`));
    if (e.indices.length) parts.push(h('span', {}, `indices ${e.indices.join(', ')}`));
    for (const [k, v] of Object.entries(e.data)) {
      if (k === 'indices' || k === 'owner') continue;
      parts.push(h('span', {}, `${k === 'keepAliveMs' ? 'keep-alive' : k} ${fieldText(k, v)}`));
    }
    if (e.correlation_id) parts.push(h('span', {}, `X-Opaque-Id ${e.correlation_id}`));
    return parts;
  }

  function item(e) {
    const kind = e.aggregate === 'scroll' || e.aggregate === 'pit' ? 'context' : e.aggregate;
    const button = TIMELINE_KINDS.has(e.aggregate) ? h('button', { type: 'button', 'aria-label': `Timeline of ${e.aggregate} ${e.aggregate_id}` }, 'Timeline') : '';
    if (button) button.addEventListener('click', () => ctx.openTimeline(kind, e.aggregate_id));
    return h('li', { 'data-type': e.type, 'data-id': e.aggregate_id },
      h('time', { class: 'time', datetime: e.time, title: e.time }, clock(e.time)),
      h('span', { class: 'what' }, e.type),
      h('span', { class: 'detail' }, h('span', {}, h('code', { title: e.aggregate_id }, e.aggregate_id.slice(0, 13))), details(e)),
      button);
  }

  function render() {
    if (!visible || paused) return;
    fresh = []; // drawn below with the rest
    const shown = entries.filter(filter()).slice(0, SHOW);
    replace($('feed'), shown.map(item));
    const empty = $('feed-empty');
    empty.hidden = shown.length > 0;
    setText(empty, entries.length ? 'No fact matches the filters.' : 'No facts yet: they appear here as they happen. You see the facts your privileges allow (contexts need monitor).');
  }

  // Facts are drawn at most every 100 ms: a burst of thousands costs one DOM update, not thousands.
  function add(e) {
    entries.unshift(e);
    if (entries.length > KEEP) entries.length = KEEP;
    received++;
    ctx.fact(e);
    fresh.push(e);
    flushing ??= setTimeout(flush, 100);
  }

  function flush() {
    flushing = null;
    const batch = fresh;
    fresh = [];
    setText($('live-count'), received);
    if (!visible || paused) return;
    const shown = batch.filter(filter()).slice(-SHOW);
    if (!shown.length) return;
    const list = $('feed');
    list.prepend(...shown.reverse().map(item));
    while (list.children.length > SHOW) list.lastChild.remove();
    $('feed-empty').hidden = true;
  }

  async function connect() {
    while (!stopped) {
      controller = new AbortController();
      status('Connecting…');
      let ended = null;
      try {
        await stream('/_console/api/feed', (event, data) => {
          if (event === 'hello') {
            retryMs = 1000;
            status(`Live: receiving facts from node ${data.node}.`);
            $('feed').dataset.connected = 'true';
          } else if (event === 'fact') add(data);
          else if (event === 'end' || event === 'overflow') ended = data.reason;
        }, controller.signal);
      } catch (e) {
        if (stopped) return;
        if (e instanceof ApiError && e.status === 401) {
          ctx.api.call('/_console/api/session').catch(() => undefined); // triggers the logout flow
          return;
        }
        ended = e.message;
      }
      if (stopped) return;
      $('feed').dataset.connected = 'false';
      status(`Disconnected${ended ? ` (${ended})` : ''}; reconnecting in ${Math.round(retryMs / 1000)} s. Facts in between are not shown.`);
      announce('Live feed disconnected');
      await new Promise((r) => setTimeout(r, retryMs));
      retryMs = Math.min(30_000, retryMs * 2);
      if (ended && /credentials|authenticate/i.test(ended)) {
        ctx.api.call('/_console/api/session').catch(() => undefined);
      }
    }
  }

  return {
    connect: () => void connect(),
    show() {
      visible = true;
      render();
    },
    hide() {
      visible = false;
    },
    stop() {
      stopped = true;
      controller?.abort();
      clearTimeout(flushing);
    },
    onFact() {},
  };
}
