// "Now": open scroll contexts and PITs with their keep-alive running down, per-owner totals against
// search.max_open_scroll_context, and credentials with buttons that call the ES invalidation APIs.
import { $, h, replace, setText, syncRows, duration, time, ownerLabel, badge, announce } from './dom.js';

const CONTEXT_POLL_MS = 2000;
const CREDENTIAL_POLL_MS = 5000;
const TICK_MS = 250;

export function createNow(ctx) {
  const { call } = ctx.api;
  /** Listeners on the page's fixed elements end with the session (ctx.signal), not with the page. */
  const on = (el, type, fn) => el.addEventListener(type, fn, { signal: ctx.signal });
  const access = ctx.session.access;
  let contexts = null;
  let creds = null;
  let offset = 0; // server clock - browser clock
  let timers = [];
  let pendingContexts = null;
  let pendingCreds = null;
  const confirming = new Set();

  $('contexts-denied').hidden = access.monitor;
  $('contexts-body').hidden = !access.monitor;
  $('keys-denied').hidden = access.api_keys !== 'none';
  $('keys-body').hidden = access.api_keys === 'none';
  $('tokens-denied').hidden = access.tokens;
  $('tokens-body').hidden = !access.tokens;
  $('service-denied').hidden = access.service_tokens;
  $('service-body').hidden = !access.service_tokens;

  const serverNow = () => Date.now() + offset;

  // ---------- contexts ----------

  async function refreshContexts() {
    if (!access.monitor) return;
    try {
      const data = await call('/_console/api/contexts');
      offset = data.now - Date.now();
      contexts = data;
      renderContexts();
    } catch (e) {
      setText($('contexts-empty'), `Could not load contexts: ${e.message}`);
      $('contexts-empty').hidden = false;
    }
  }

  const filterForm = $('context-filters');
  on(filterForm, 'input', () => contexts && renderContexts());
  on(filterForm, 'submit', (ev) => ev.preventDefault());

  function contextFilter() {
    const f = filterForm.elements;
    const kind = f.kind.value;
    const owner = f.owner.value.trim().toLowerCase();
    const index = f.index.value.trim().toLowerCase();
    return (c) =>
      (!kind || c.kind === kind) &&
      (!owner || ownerLabel(c.owner).toLowerCase().includes(owner)) &&
      (!index || c.indices.some((i) => i.toLowerCase().includes(index)));
  }

  function renderContexts() {
    const { limit, owners } = contexts;
    const share = limit.max ? limit.open_scroll_shard_contexts / limit.max : 0;
    setText($('limit-text'), `${limit.open_scroll_shard_contexts} of ${limit.max} scroll shard contexts open on this node (${limit.setting})`);
    $('limit-meter').value = Math.min(1, share);
    $('limit-meter').high = 0.8;
    $('limit-meter').optimum = 0;

    syncRows($('owners-rows'), owners, (o) => ownerLabel(o.owner), () => h('tr', {}, h('th', { scope: 'row' }), h('td', { class: 'num' }), h('td', { class: 'num' }), h('td', {}, h('meter', { min: 0, max: 1, high: 0.8, optimum: 0 })), h('td', { class: 'num' })), (tr, o) => {
      const [name, scrolls, shards, shareCell, pits] = tr.children;
      setText(name, ownerLabel(o.owner));
      setText(scrolls, o.scrolls);
      setText(shards, o.scroll_shard_contexts);
      const m = shareCell.firstChild;
      m.value = Math.min(1, o.share);
      m.setAttribute('aria-label', `${Math.round(o.share * 1000) / 10}% of ${limit.max}`);
      m.title = `${o.scroll_shard_contexts} of ${limit.max}`;
      setText(pits, o.pits);
    });

    const shown = contexts.contexts.filter(contextFilter());
    syncRows($('contexts-rows'), shown, (c) => c.id, createContextRow, updateContextRow);
    const empty = $('contexts-empty');
    empty.hidden = shown.length > 0;
    setText(empty, contexts.contexts.length ? 'No open context matches the filters.' : 'No open scroll contexts or PITs on this node.');
    const more = contexts.total - contexts.contexts.length;
    setText($('contexts-more'), more > 0 ? `Showing the oldest ${contexts.contexts.length} of ${contexts.total} open contexts; the filters apply to these.` : '\u00a0');
    tick();
  }

  function createContextRow(c) {
    const bar = h('div', { class: 'ka' }, h('div', { class: 'bar', role: 'progressbar', 'aria-valuemin': 0, 'aria-label': 'Keep-alive left' }, h('span', { class: 'fill' })), h('span', { class: 'label', 'aria-hidden': 'true' }));
    const timeline = h('button', { type: 'button' }, 'Timeline');
    timeline.addEventListener('click', () => ctx.openTimeline('context', c.id));
    return h('tr', { 'data-id': c.id, 'data-kind': c.kind },
      h('td', {}, c.kind === 'pit' ? 'PIT' : 'scroll'),
      h('td', {}), h('td', {}), h('td', { class: 'num age' }), h('td', {}, bar), h('td', { class: 'num' }), h('td', {}),
      h('td', {}, h('div', { class: 'actions' }, timeline)));
  }

  function updateContextRow(tr, c) {
    const cells = tr.children;
    setText(cells[1], ownerLabel(c.owner));
    setText(cells[2], c.indices.join(', ') + (c.slice ? ` (slice ${c.slice.id}/${c.slice.max})` : ''));
    setText(cells[5], c.pages);
    setText(cells[6], c.node.name);
    tr.dataset.created = c.created;
    tr.dataset.keepAlive = c.keep_alive_ms;
    tr.dataset.expiresAt = c.expires_at === null ? '' : c.expires_at;
  }

  /** Runs every 250 ms: ages and keep-alive bars move without a request. */
  function tick() {
    const now = serverNow();
    let ending = false;
    for (const tr of $('contexts-rows').children) {
      const ka = Number(tr.dataset.keepAlive);
      const exp = tr.dataset.expiresAt === '' ? null : Number(tr.dataset.expiresAt);
      setText(tr.children[3], duration(now - Number(tr.dataset.created)));
      const bar = tr.querySelector('.bar');
      const fill = bar.firstChild;
      const label = bar.nextSibling;
      bar.setAttribute('aria-valuemax', String(Math.round(ka / 1000)));
      if (exp === null) {
        bar.className = 'bar inuse';
        fill.style.width = '100%';
        bar.setAttribute('aria-valuenow', String(Math.round(ka / 1000)));
        bar.setAttribute('aria-valuetext', 'in use: the keep-alive restarts when the search is done');
        setText(label, 'in use');
        continue;
      }
      const left = Math.max(0, exp - now);
      const frac = ka > 0 ? Math.min(1, left / ka) : 0;
      bar.className = frac < 0.25 ? 'bar low' : 'bar';
      fill.style.width = `${(frac * 100).toFixed(1)}%`;
      bar.setAttribute('aria-valuenow', String(Math.ceil(left / 1000)));
      bar.setAttribute('aria-valuetext', `${duration(left)} of ${duration(ka)} left`);
      setText(label, left > 0 ? `${duration(left)} / ${duration(ka)}` : 'expiring…');
      tr.classList.toggle('ending', left === 0);
      if (left === 0) ending = true;
    }
    if (ending) soonContexts(500);
  }

  // ---------- credentials ----------

  async function refreshCredentials() {
    if (access.api_keys === 'none' && !access.tokens && !access.service_tokens) return;
    try {
      creds = await call('/_console/api/credentials');
      renderCredentials();
    } catch (e) {
      setText($('credentials-notice'), `Could not load credentials: ${e.message}`);
    }
  }

  const keyForm = $('key-filters');
  on(keyForm, 'input', () => creds && renderCredentials());
  on(keyForm, 'submit', (ev) => ev.preventDefault());

  const since = (ms) => (ms === null ? 'never on this node' : `${duration(Date.now() + offset - ms)} ago`);
  const until = (ms) => (ms === null ? 'never' : time(ms, ms > Date.now() + offset ? `in ${duration(ms - Date.now() - offset)}` : `${duration(Date.now() + offset - ms)} ago`));

  function renderCredentials() {
    const owner = keyForm.elements.owner.value.trim().toLowerCase();
    const all = keyForm.elements.all.checked;
    // By owner (who holds what), newest first within an owner.
    const keys = creds.api_keys.keys
      .filter((k) => (all || k.status === 'active') && (!owner || ownerLabel(k.owner).toLowerCase().includes(owner)))
      .sort((a, b) => ownerLabel(a.owner).localeCompare(ownerLabel(b.owner)) || b.creation - a.creation);
    syncRows($('keys-rows'), keys, (k) => k.id, (k) => h('tr', { 'data-id': k.id }, h('td', {}), h('td', {}), h('td', {}), h('td', {}), h('td', {}), h('td', {}), h('td', {})), (tr, k) => {
      const c = tr.children;
      replace(c[0], k.name, h('br'), h('code', { class: 'id', title: 'API key id' }, k.id));
      setText(c[1], ownerLabel(k.owner));
      replace(c[2], time(k.creation));
      replace(c[3], until(k.expiration));
      replace(c[4], k.last_used === null ? 'never on this node' : time(k.last_used, since(k.last_used)));
      replace(c[5], badge(k.status));
      actions(tr, c[6], `${k.status}`, `apikey:${k.id}`, k.status === 'active' ? `Invalidate API key ${k.name}` : null, () => invalidateKey(k), () => ctx.openTimeline('apikey', k.id));
    });
    const keysEmpty = $('keys-empty');
    keysEmpty.hidden = keys.length > 0;
    setText(keysEmpty, creds.api_keys.total ? 'No API key matches the filters.' : access.api_keys === 'own' ? 'You own no API keys.' : 'No API keys.');
    const moreKeys = creds.api_keys.total - creds.api_keys.keys.length;
    setText($('keys-more'), moreKeys > 0 ? `Showing the newest ${creds.api_keys.keys.length} of ${creds.api_keys.total} API keys; the filters apply to these.` : '\u00a0');

    const pairs = creds.tokens.pairs;
    syncRows($('tokens-rows'), pairs, (t) => t.id, (t) => h('tr', { 'data-id': t.id }, h('td', {}), h('td', {}), h('td', {}), h('td', {}), h('td', {}), h('td', {}), h('td', {}), h('td', {})), (tr, t) => {
      const c = tr.children;
      setText(c[0], `${t.username} (${t.realm})`);
      setText(c[1], t.grant_type);
      replace(c[2], time(t.created));
      replace(c[3], t.access_invalidated ? 'invalidated' : until(t.access_expires));
      replace(c[4], t.refresh_expires === null ? '—' : t.refresh_invalidated ? 'invalidated' : until(t.refresh_expires));
      replace(c[5], t.last_used === null ? 'never on this node' : time(t.last_used, since(t.last_used)));
      replace(c[6], badge(t.status));
      actions(tr, c[7], `${t.status}`, `token:${t.id}`, `Invalidate all tokens of ${t.username}`, () => invalidateTokens(t), () => ctx.openTimeline('token', t.id));
    });
    $('tokens-empty').hidden = pairs.length > 0;

    const svc = creds.service_tokens.tokens;
    syncRows($('service-rows'), svc, (t) => `${t.account}/${t.name}/${t.source}`, () => h('tr', {}, h('td', {}), h('td', {}), h('td', {}), h('td', {}), h('td', {}), h('td', {})), (tr, t) => {
      const c = tr.children;
      setText(c[0], t.account);
      setText(c[1], t.name);
      setText(c[2], t.source === 'file' ? 'file (config/service_tokens)' : 'API');
      replace(c[3], t.creation === null ? '—' : time(t.creation));
      replace(c[4], t.last_used === null ? 'never on this node' : time(t.last_used, since(t.last_used)));
      if (t.source === 'file') replace(c[5], h('span', { class: 'hint' }, 'remove with npm run service-tokens -- delete'));
      else actions(tr, c[5], 'index', `servicetoken:${t.account}/${t.name}`, `Delete service token ${t.name}`, () => deleteServiceToken(t), null);
    });
    $('service-empty').hidden = svc.length > 0;
  }

  /**
   * The actions cell: Timeline, and a destructive button that asks for confirmation in place (no
   * modal). Rebuilt only when its state changes, so a focused button keeps focus across refreshes.
   */
  function actions(tr, cell, status, key, label, run, timeline) {
    const sig = `${status}|${confirming.has(key)}`;
    if (tr.dataset.sig === sig) return;
    tr.dataset.sig = sig;
    const parts = [];
    if (timeline) {
      const b = h('button', { type: 'button' }, 'Timeline');
      b.addEventListener('click', timeline);
      parts.push(b);
    }
    if (label && confirming.has(key)) {
      const yes = h('button', { type: 'button', class: 'danger', 'aria-label': `Confirm: ${label}` }, 'Confirm');
      const no = h('button', { type: 'button' }, 'Cancel');
      yes.addEventListener('click', async () => {
        yes.disabled = no.disabled = true;
        confirming.delete(key);
        await run();
      });
      no.addEventListener('click', () => {
        confirming.delete(key);
        renderCredentials();
        cell.querySelector('button.danger')?.focus();
      });
      parts.push(yes, no);
      replace(cell, h('div', { class: 'actions' }, parts));
      yes.focus();
      return;
    }
    if (label) {
      const b = h('button', { type: 'button', class: 'danger', 'aria-label': label, title: label }, label.startsWith('Delete') ? 'Delete' : 'Invalidate');
      b.addEventListener('click', () => {
        confirming.add(key);
        renderCredentials();
      });
      parts.push(b);
    }
    replace(cell, h('div', { class: 'actions' }, parts));
  }

  function notice(text) {
    setText($('credentials-notice'), text);
    announce(text);
  }

  async function invalidateKey(k) {
    // manage_own_api_key may only address its own keys: ES wants `owner: true` then.
    const body = access.api_keys === 'all' ? { ids: [k.id] } : { ids: [k.id], owner: true };
    try {
      const r = await call('/_security/api_key', { method: 'DELETE', body });
      notice(r.invalidated_api_keys.includes(k.id) ? `API key ${k.name} (${k.id}) invalidated.` : `API key ${k.name} was already invalidated.`);
    } catch (e) {
      notice(`Could not invalidate API key ${k.name}: ${e.message}`);
    }
    await refreshCredentials();
  }

  async function invalidateTokens(t) {
    try {
      const r = await call('/_security/oauth2/token', { method: 'DELETE', body: { username: t.username, realm_name: t.realm } });
      notice(`Tokens of ${t.username}: ${r.invalidated_tokens} invalidated, ${r.previously_invalidated_tokens} already invalidated.`);
    } catch (e) {
      notice(`Could not invalidate the tokens of ${t.username}: ${e.message}`);
    }
    await refreshCredentials();
  }

  async function deleteServiceToken(t) {
    const [ns, svc] = t.account.split('/');
    const path = `/_security/service/${encodeURIComponent(ns)}/${encodeURIComponent(svc)}/credential/token/${encodeURIComponent(t.name)}`;
    try {
      const r = await call(path, { method: 'DELETE' });
      notice(r.found ? `Service token ${t.account}/${t.name} deleted.` : `Service token ${t.account}/${t.name} was already gone.`);
    } catch (e) {
      notice(`Could not delete service token ${t.name}: ${e.message}`);
    }
    await refreshCredentials();
  }

  // ---------- life cycle ----------

  function soonContexts(ms = 150) {
    if (pendingContexts) return;
    pendingContexts = setTimeout(() => {
      pendingContexts = null;
      void refreshContexts();
    }, ms);
  }
  function soonCredentials() {
    if (pendingCreds) return;
    pendingCreds = setTimeout(() => {
      pendingCreds = null;
      void refreshCredentials();
    }, 150);
  }

  return {
    show() {
      void refreshContexts();
      void refreshCredentials();
      timers = [setInterval(refreshContexts, CONTEXT_POLL_MS), setInterval(refreshCredentials, CREDENTIAL_POLL_MS), setInterval(tick, TICK_MS)];
    },
    hide() {
      for (const t of timers) clearInterval(t);
      timers = [];
    },
    stop() {
      this.hide();
      clearTimeout(pendingContexts);
      clearTimeout(pendingCreds);
    },
    onFact(f) {
      if (!timers.length) return;
      if (f.aggregate === 'scroll' || f.aggregate === 'pit') soonContexts();
      else if (f.aggregate === 'apikey' || f.aggregate === 'token' || f.aggregate === 'servicetoken') soonCredentials();
    },
  };
}
