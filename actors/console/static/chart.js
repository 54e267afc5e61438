// Open contexts over time per owner, drawn as inline SVG step lines (no chart library, no CDN).
// The same numbers are in a table under the chart for screen readers and for copying.
import { h, s, replace, setText } from './dom.js';

const W = 800;
const H = 250;
const PAD = { l: 40, r: 12, t: 12, b: 28 };

/** A tick step of 1, 2 or 5 × 10^n giving about `n` ticks up to `max`. */
function niceStep(max, n = 5) {
  const raw = Math.max(1, max / n);
  const p = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * p).find((v) => v >= raw);
}

export function renderChart(area, legendBox, caption, tableBox, data) {
  const { from, to, buckets, series, total } = data;
  const max = Math.max(1, ...total);
  const step = niceStep(max);
  const top = Math.ceil(max / step) * step;
  const x = (i) => PAD.l + (i / buckets) * (W - PAD.l - PAD.r);
  const y = (v) => H - PAD.b - (v / top) * (H - PAD.t - PAD.b);
  const path = (values) => {
    let d = `M${x(0).toFixed(1)},${y(values[0]).toFixed(1)}`;
    values.forEach((v, i) => {
      if (i > 0) d += `V${y(v).toFixed(1)}`;
      d += `H${x(i + 1).toFixed(1)}`;
    });
    return d;
  };
  const grid = [];
  for (let v = 0; v <= top; v += step) {
    grid.push(s('line', { class: 'grid', x1: PAD.l, x2: W - PAD.r, y1: y(v).toFixed(1), y2: y(v).toFixed(1) }));
    grid.push(s('text', { x: PAD.l - 6, y: y(v).toFixed(1), 'text-anchor': 'end', 'dominant-baseline': 'middle' }, String(v)));
  }
  const fmt = (ms) => new Date(ms).toLocaleString(undefined, to - from > 86_400_000 ? { month: 'short', day: '2-digit', hour: '2-digit', minute: '2-digit' } : { hour: '2-digit', minute: '2-digit', second: to - from <= 3_600_000 ? '2-digit' : undefined });
  for (let k = 0; k <= 4; k++) {
    const i = (k / 4) * buckets;
    grid.push(s('text', { x: x(i).toFixed(1), y: H - 8, 'text-anchor': k === 0 ? 'start' : k === 4 ? 'end' : 'middle' }, fmt(from + (k / 4) * (to - from))));
  }
  const lines = series.map((se, n) => s('path', { class: `series s${(n % 8) + 1}`, d: path(se.values) }, s('title', {}, `${se.label}: peak ${se.peak}`)));
  const summary = series.length
    ? `Peak open contexts per owner between ${new Date(from).toLocaleString()} and ${new Date(to).toLocaleString()}: ${series.map((se) => `${se.label} ${se.peak}`).join(', ')}.`
    : `No context was open between ${new Date(from).toLocaleString()} and ${new Date(to).toLocaleString()}.`;
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': summary, preserveAspectRatio: 'none' },
    grid, series.length ? s('path', { class: 'total', d: path(total) }, s('title', {}, 'all owners')) : '', lines);
  replace(area, svg);
  setText(caption, summary + (data.other_owners ? ` ${data.other_owners} more owners not drawn.` : ''));
  const legend = h('ul', { class: 'legend' }, series.map((se, n) => h('li', {}, h('span', { class: `swatch s${(n % 8) + 1}` }), se.label)), series.length ? h('li', {}, '- - all owners') : '');
  replace(legendBox, legend);

  const head = h('tr', {}, h('th', { scope: 'col' }, 'From'), series.map((se) => h('th', { scope: 'col', class: 'num' }, se.label)), h('th', { scope: 'col', class: 'num' }, 'All'));
  const rows = total.map((t, i) => h('tr', {}, h('th', { scope: 'row' }, new Date(from + i * data.bucket_ms).toLocaleTimeString()), series.map((se) => h('td', { class: 'num' }, String(se.values[i]))), h('td', { class: 'num' }, String(t))));
  replace(tableBox, h('table', { class: 'data' }, h('thead', {}, head), h('tbody', {}, rows)));
}
