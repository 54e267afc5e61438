// "Cluster": health, nodes with their shard copies and open contexts. Reads the ES APIs
// (`_cluster/health`, `_nodes/stats`) and the console's node/shard-copy view, which a clustered node
// fills from its allocation (today: one node holds every primary; replicas stay unassigned).
import { $, h, replace, setText, syncRows } from './dom.js';

const POLL_MS = 5000;

export function createCluster(ctx) {
  const { call } = ctx.api;
  const allowed = ctx.session.access.monitor;
  let timer = null;
  $('cluster-denied').hidden = allowed;
  $('cluster-body').hidden = !allowed;

  async function refresh() {
    if (!allowed) return;
    try {
      const [health, stats, view] = await Promise.all([call('/_cluster/health'), call('/_nodes/stats/indices/search'), call('/_console/api/cluster')]);
      render(health, stats, view);
    } catch (e) {
      setText($('health-text'), `Could not read the cluster: ${e.message}`);
    }
  }

  function render(health, stats, view) {
    const b = $('health-badge');
    setText(b, health.status);
    b.className = `badge ${health.status}`;
    setText($('health-text'), `${health.cluster_name}: ${health.number_of_nodes} node${health.number_of_nodes === 1 ? '' : 's'}, ${health.active_shards} active shards, ${health.unassigned_shards} unassigned`);
    const fields = ['number_of_nodes', 'number_of_data_nodes', 'active_primary_shards', 'active_shards', 'relocating_shards', 'initializing_shards', 'unassigned_shards', 'active_shards_percent_as_number'];
    syncRows($('health-rows'), fields, (f) => f, () => h('tr', {}, h('th', { scope: 'row' }), h('td', { class: 'num' })), (tr, f) => {
      setText(tr.children[0], f.replace(/_/g, ' '));
      const v = health[f];
      setText(tr.children[1], typeof v === 'number' && !Number.isInteger(v) ? v.toFixed(1) : String(v));
    });

    syncRows($('nodes-rows'), view.nodes, (n) => n.id, (n) => h('tr', { 'data-id': n.id }, h('th', { scope: 'row' }), h('td', {}), h('td', {}), h('td', { class: 'num' }), h('td', { class: 'num' }), h('td', { class: 'num' }), h('td', {})), (tr, n) => {
      const c = tr.children;
      const st = stats.nodes?.[n.id]?.indices?.search;
      replace(c[0], n.name, n.local ? ' (this node)' : '', h('br'), h('code', {}, n.id));
      setText(c[1], n.host || '—');
      setText(c[2], n.roles.join(', ') || '—');
      setText(c[3], n.contexts.scroll);
      setText(c[4], n.contexts.pit);
      setText(c[5], st ? st.query_total : '—');
      replace(c[6], n.shards.length ? copies(n.shards) : h('span', { class: 'empty' }, 'no shard copies'));
    });

    replace($('unassigned'), view.unassigned.map(copy));
    $('unassigned-empty').hidden = view.unassigned.length > 0;
  }

  const copy = (c) => h('li', { class: c.primary ? 'primary' : 'replica', title: `${c.primary ? 'primary' : 'replica'} ${c.state}` }, `${c.index}[${c.shard}] ${c.primary ? 'P' : 'R'}${c.state === 'STARTED' ? '' : ` ${c.state.toLowerCase()}`}`);
  const copies = (list) => h('ul', { class: 'copies', 'aria-label': 'Shard copies' }, list.map(copy));

  return {
    show() {
      void refresh();
      timer = setInterval(refresh, POLL_MS);
    },
    hide() {
      clearInterval(timer);
      timer = null;
    },
    stop() {
      this.hide();
    },
    onFact() {},
  };
}
