// "History": one context's or credential's timeline from the log, the whole state "as of" a moment
// (the node folds the log up to it, as `npm run replay -- --at` does), and a chart of open contexts.
import { $, h, s, replace, setText, syncRows, duration, time, ownerLabel, badge, fieldText } from './dom.js';
import { renderChart } from './chart.js';

export function createHistory(ctx) {
  const { call } = ctx.api;
  /** Listeners on the page's fixed elements end with the session (ctx.signal), not with the page. */
  const on = (el, type, fn) => el.addEventListener(type, fn, { signal: ctx.signal });
  const access = ctx.session.access;
  let bounds = null;
  let asOfController = null;
  let debounce = null;
  let visible = false;

  // ---------- timeline ----------

  const tform = $('timeline-form');
  on(tform, 'submit', (ev) => {
    ev.preventDefault();
    const id = tform.elements.id.value.trim();
    if (id) void openTimeline(tform.elements.aggregate.value, id);
  });

  async function openTimeline(kind, id) {
    tform.elements.aggregate.value = kind;
    tform.elements.id.value = id;
    const box = $('timeline');
    replace(box, h('p', { class: 'status' }, 'Reading the log…'));
    try {
      const t = kind === 'context' ? contextTimeline(await call(`/_contexts/${encodeURIComponent(id)}`)) : credentialTimeline(await call(`/_console/api/credentials/${encodeURIComponent(kind)}/${encodeURIComponent(id)}`));
      renderTimeline(box, t);
    } catch (e) {
      replace(box, h('p', { class: 'error', role: 'alert' }, `No timeline: ${e.message}`));
    }
    box.scrollIntoView({ block: 'nearest' });
  }

  const fields = (data, skip = []) =>
    Object.entries(data ?? {})
      .filter(([k, v]) => !skip.includes(k) && v !== undefined && v !== null)
      .map(([k, v]) => [k === 'keepAliveMs' ? 'keep-alive' : k, fieldText(k, v)]);

  /** Bytes as ES prints them (1024-based, one decimal). */
  function bytes(n) {
    const units = ['b', 'kb', 'mb', 'gb', 'tb'];
    let u = 0;
    while (n >= 1024 && u < units.length - 1) {
      n /= 1024;
      u++;
    }
    return `${Math.round(n * 10) / 10}${units[u]}`;
  }

  /** ", N merged away": segments kept only for this context. */
  function pinnedAway(c) {
    const away = c.pinned_segments.flatMap((p) => p.segments).filter((g) => !g.live);
    return away.length ? `, ${away.length} merged away (${bytes(away.reduce((n, g) => n + g.size_in_bytes, 0))})` : '';
  }

  function contextTimeline(c) {
    const ms = (iso) => (iso ? Date.parse(iso) : null);
    return {
      title: `${c.kind === 'pit' ? 'PIT' : 'Scroll'} ${c.id}`,
      id: c.id,
      status: c.status,
      summary: [
        ['owner', ownerLabel(c.owner)],
        ['indices', c.indices.join(', ')],
        ['shards', String(c.shards)],
        ['keep-alive', c.keep_alive],
        ['opened', time(ms(c.opened_at))],
        ['extensions', String(c.extensions)],
        ...(c.expires_at ? [['expires', time(ms(c.expires_at))]] : []),
        ...(c.ended_at ? [['ended', time(ms(c.ended_at))]] : []),
        ...(c.reason ? [['reason', c.reason]] : []),
        ...(c.by ? [['by', c.by]] : []),
        ...(c.pinned_segments ? [['pinned segments', `${c.pinned_segments_count} (${bytes(c.pinned_size_in_bytes)}) on ${c.pinned_segments.length} shard copies${pinnedAway(c)}`]] : []),
      ],
      steps: c.history.map((x) => ({ seq: x.seq, time: Date.parse(x.time), type: x.type, correlation: x.correlation_id, detail: fields(x.data, ['owner', 'indices', 'shards']) })),
      open: c.status === 'open',
    };
  }

  function credentialTimeline(c) {
    const label = { apikey: 'API key', token: 'Token pair', servicetoken: 'Service token' }[c.aggregate];
    return {
      title: `${label} ${c.name ?? c.account ?? ''} ${c.id}`.replace(/\s+/g, ' '),
      id: c.id,
      status: c.status,
      summary: [['owner', ownerLabel(c.owner)], ['facts', String(c.history.length)]],
      steps: c.history.map((x) => ({ seq: x.seq, time: Date.parse(x.time), type: x.type, correlation: x.correlation_id, detail: fields(x.data) })),
      open: c.status === 'active' || c.status === 'refreshed',
    };
  }

  function renderTimeline(box, t) {
    const dl = h('dl', {}, t.summary.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
    const steps = h('ol', { 'aria-label': 'Facts in order' }, t.steps.map((st) =>
      h('li', { 'data-type': st.type },
        h('strong', {}, st.type), ' ', h('span', { class: 'meta' }, '#', st.seq, ' · ', time(st.time)),
        st.detail.length || st.correlation ? h('div', { class: 'meta' }, [...st.detail.map(([k, v]) => `${k} ${v}`), ...(st.correlation ? [`X-Opaque-Id ${st.correlation}`] : [])].join(' · ')) : '')));
    const heading = h('h3', { 'data-id': t.id, tabindex: '-1' }, t.title, ' ', badge(t.status));
    replace(box, heading, lifeline(t), dl, steps);
    heading.focus(); // keyboard and screen-reader users land on what they asked for
  }

  /** The life as a line: one mark per fact, running on to now while it is still open. */
  function lifeline(t) {
    if (!t.steps.length) return '';
    const start = t.steps[0].time;
    const end = Math.max(t.open ? Date.now() : t.steps[t.steps.length - 1].time, start + 1);
    const x = (ms) => 10 + ((ms - start) / (end - start)) * 580;
    const marks = t.steps.map((st) => s('circle', { cx: x(st.time).toFixed(1), cy: 18, r: 5, class: 's1' }, s('title', {}, `${st.type} at ${new Date(st.time).toISOString()}`)));
    return s('svg', { class: 'lifeline', viewBox: '0 0 600 40', role: 'img', 'aria-label': `Life of ${t.title}: ${t.steps.length} facts over ${duration(end - start)}` },
      s('line', { x1: 10, x2: 590, y1: 18, y2: 18, class: 'grid' }),
      s('line', { x1: 10, x2: x(t.open ? end : t.steps[t.steps.length - 1].time).toFixed(1), y1: 18, y2: 18, class: 'series s1' }),
      marks,
      s('text', { x: 10, y: 38 }, new Date(start).toLocaleTimeString()),
      s('text', { x: 590, y: 38, 'text-anchor': 'end' }, t.open ? 'now' : new Date(end).toLocaleTimeString()));
  }

  // ---------- as of ----------

  const aform = $('asof-form');
  const slider = $('asof-slider');
  const timeInput = $('asof-time');

  async function loadBounds() {
    bounds = await call('/_console/api/log');
    const now = Date.now();
    const min = (bounds.first ?? now) - 1000; // a moment before the first fact: nothing existed yet
    slider.min = String(min);
    slider.max = String(now);
    slider.step = String(Math.max(1, Math.round((now - min) / 1000)));
    const label = `From ${new Date(min).toISOString()} to now`;
    slider.setAttribute('aria-valuetext', new Date(Number(slider.value)).toISOString());
    slider.title = label;
  }

  on(slider, 'input', () => {
    const iso = new Date(Number(slider.value)).toISOString();
    timeInput.value = iso;
    slider.setAttribute('aria-valuetext', iso);
    clearTimeout(debounce);
    debounce = setTimeout(() => void loadState(slider.value), 300);
  });
  on(aform, 'submit', (ev) => {
    ev.preventDefault();
    void loadState(timeInput.value.trim() || 'now');
  });
  on($('asof-now'), 'click', async () => {
    await loadBounds();
    slider.value = slider.max;
    void loadState('now');
  });
  on($('asof-ended'), 'change', () => void loadState(timeInput.value.trim() || 'now'));

  async function loadState(at) {
    asOfController?.abort();
    asOfController = new AbortController();
    setText($('asof-status'), 'Folding the log…');
    $('asof-rows').setAttribute('aria-busy', 'true');
    try {
      const q = new URLSearchParams({ at: String(at), ...($('asof-ended').checked ? { ended: 'true' } : {}) });
      const r = await call(`/_console/api/state?${q}`, { signal: asOfController.signal });
      timeInput.value = new Date(r.at).toISOString();
      if (r.at >= Number(slider.min) && r.at <= Number(slider.max)) slider.value = String(r.at);
      slider.setAttribute('aria-valuetext', timeInput.value);
      const totals = Object.entries(r.totals).map(([a, st]) => `${a}: ${Object.entries(st).map(([k, n]) => `${n} ${k}`).join(', ')}`).join('; ');
      setText($('asof-status'), `As of ${new Date(r.at).toLocaleString()}: ${r.folded} of ${r.read} facts folded. ${totals || 'Nothing you may see existed yet.'}${r.truncated ? ' (first 1000 rows shown)' : ''}`);
      $('asof-rows').dataset.at = String(r.at);
      syncRows($('asof-rows'), r.rows, (row) => `${row.aggregate}/${row.id}`, (row) => h('tr', { 'data-id': row.id, 'data-aggregate': row.aggregate }, h('td', {}), h('td', {}), h('td', {}), h('td', {})), (tr, row) => {
        const c = tr.children;
        tr.dataset.status = row.status;
        setText(c[0], row.aggregate);
        replace(c[1], h('code', { title: row.id }, row.id));
        replace(c[2], badge(row.status));
        setText(c[3], [...Object.entries(row.fields).map(([k, v]) => `${k}=${v}`), ...(row.note ? [`(${row.note})`] : [])].join('  '));
      });
      $('asof-empty').hidden = r.rows.length > 0;
    } catch (e) {
      if (e.name === 'AbortError') return;
      setText($('asof-status'), `Could not fold the log: ${e.message}`);
    } finally {
      $('asof-rows').removeAttribute('aria-busy');
    }
  }

  // ---------- chart ----------

  const cform = $('chart-form');
  $('chart-denied').hidden = access.monitor;
  $('chart').hidden = !access.monitor;
  cform.hidden = !access.monitor;
  on(cform, 'submit', (ev) => {
    ev.preventDefault();
    void loadChart();
  });
  on(cform.elements.range, 'change', () => void loadChart());

  async function loadChart() {
    if (!access.monitor) return;
    const to = Date.now();
    const from = to - Number(cform.elements.range.value);
    try {
      const data = await call(`/_console/api/chart?from=${from}&to=${to}&buckets=60`);
      renderChart($('chart-area'), $('chart-legend'), $('chart-caption'), $('chart-table'), data);
    } catch (e) {
      setText($('chart-caption'), `Could not draw the chart: ${e.message}`);
    }
  }

  return {
    openTimeline,
    async show() {
      visible = true;
      try {
        await loadBounds();
        if (!timeInput.value) void loadState('now');
      } catch (e) {
        setText($('asof-status'), `Could not read the log: ${e.message}`);
      }
      if (visible) void loadChart();
    },
    hide() {
      visible = false;
    },
    stop() {
      asOfController?.abort();
      clearTimeout(debounce);
    },
    onFact() {},
  };
}
