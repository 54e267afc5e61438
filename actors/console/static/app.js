// The console page: log in, then four tabs (Now, Live, History, Cluster). Plain ES modules served by
// the node; nothing to build. See actors/console/README.md.
import { $, h, replace, setText, announce } from './dom.js';
import * as api from './api.js';
import { createNow } from './now.js';
import { createLive } from './live.js';
import { createHistory } from './history.js';
import { createCluster } from './cluster.js';

const TABS = ['now', 'live', 'history', 'cluster'];
let views = null;
/** Ends with the session: listeners of the views on the page's fixed elements. */
let session$ = null;

// ---- login ----

const form = $('login-form');
const methodOf = () => form.elements.method.value;

function showMethodFields() {
  for (const el of form.querySelectorAll('.fields')) el.hidden = el.dataset.method !== methodOf();
}
for (const r of form.elements.method) r.addEventListener('change', showMethodFields);

form.addEventListener('submit', async (ev) => {
  ev.preventDefault(); // never a navigation: the credentials must not reach a URL
  const method = methodOf();
  const values = { username: form.elements.username.value, password: form.elements.password.value, apikey: form.elements.apikey.value, bearer: form.elements.bearer.value };
  const missing = method === 'password' ? !values.username || !values.password : !values[method].trim();
  if (missing) return loginError('Fill in the credentials first.');
  const button = $('login-submit');
  button.disabled = true;
  setText($('login-error'), '');
  api.setCredentials(method, values);
  try {
    const session = await api.request('/_console/api/session');
    for (const k of ['password', 'apikey', 'bearer']) form.elements[k].value = '';
    start(session);
  } catch (e) {
    api.forget();
    loginError(e.status === 401 ? `Not logged in: ${e.message}` : e.message);
  } finally {
    button.disabled = false;
  }
});

function loginError(text) {
  setText($('login-error'), text);
}

$('logout').addEventListener('click', () => logout('Logged out.'));
api.onExpired((e) => logout(`Your credentials stopped working (${e.message}). Log in again.`));

function logout(message) {
  api.forget();
  if (views) for (const v of Object.values(views)) v.stop();
  session$?.abort();
  views = null;
  $('app').hidden = true;
  $('session').hidden = true;
  $('login').hidden = false;
  clearData();
  setText($('login-error'), message);
  form.elements[methodOf() === 'password' ? 'username' : methodOf()].focus();
}

/** Nothing of one user's session may stay on the page for the next one. */
function clearData() {
  for (const id of ['owners-rows', 'contexts-rows', 'keys-rows', 'tokens-rows', 'service-rows', 'feed', 'asof-rows', 'chart-area', 'chart-legend', 'chart-table', 'health-rows', 'nodes-rows', 'unassigned']) $(id).replaceChildren();
  for (const id of ['credentials-notice', 'asof-status', 'chart-caption', 'health-text', 'limit-text', 'who', 'where']) setText($(id), '\u00a0');
  replace($('timeline'), h('p', { class: 'empty' }, 'Pick a context or credential (its Timeline button), or enter an id.'));
  setText($('live-count'), '0');
  $('asof-time').value = '';
  for (const f of ['context-filters', 'key-filters', 'feed-filters', 'timeline-form']) $(f).reset();
}

// ---- the app ----

function start(session) {
  $('login').hidden = true;
  $('app').hidden = false;
  $('session').hidden = false;
  const who = session.user ? `${session.user.username} (${session.user.realm}, ${session.user.authentication_type})` : 'security is disabled';
  setText($('who'), who);
  setText($('where'), `${session.cluster_name} · node ${session.node.name}`);
  session$ = new AbortController();
  const ctx = {
    session,
    signal: session$.signal,
    api,
    openTimeline: (kind, id) => {
      select('history');
      views.history.openTimeline(kind, id);
    },
    fact: (f) => {
      for (const name of TABS) if (name !== 'live') views[name].onFact(f);
    },
  };
  views = { now: createNow(ctx), live: createLive(ctx), history: createHistory(ctx), cluster: createCluster(ctx) };
  views.live.connect();
  select('now');
  announce(`Logged in as ${who}`);
}

// ---- tabs (WAI-ARIA tabs pattern: arrows, Home and End move between tabs) ----

const tabOf = (name) => $(`tab-${name}`);

function select(name, focus = true) {
  for (const t of TABS) {
    const on = t === name;
    const tab = tabOf(t);
    tab.setAttribute('aria-selected', String(on));
    tab.tabIndex = on ? 0 : -1;
    $(`panel-${t}`).hidden = !on;
    if (views) (on ? views[t].show : views[t].hide)();
  }
  if (focus) tabOf(name).focus();
}

for (const name of TABS) {
  const tab = tabOf(name);
  tab.addEventListener('click', () => select(name));
  tab.addEventListener('keydown', (ev) => {
    const i = TABS.indexOf(name);
    const next = { ArrowRight: (i + 1) % TABS.length, ArrowLeft: (i + TABS.length - 1) % TABS.length, Home: 0, End: TABS.length - 1 }[ev.key];
    if (next === undefined) return;
    ev.preventDefault();
    select(TABS[next]);
  });
}

showMethodFields();

// Security off: there is nobody to log in as, so the console opens at once.
api.request('/_console/api/security').then(
  async (r) => {
    if (!r.enabled) start(await api.request('/_console/api/session'));
    else form.elements.username.focus();
  },
  (e) => loginError(`The node did not answer: ${e.message}`),
);
