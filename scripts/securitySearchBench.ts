/**
 * Authenticated vs unauthenticated search rate on two whole nodes (security off / on), load from a
 * child process, interleaved rounds, medians: `node --import tsx scripts/securitySearchBench.ts`
 * (env R = rounds). The target is ≥ 0.9x; on a shared 2-core machine expect ±20% per round.
 */
import { execFile } from 'node:child_process';
import { startTestNode, ELASTIC_PASSWORD } from '../test/support/node';
const LOADER = `
const http = require('node:http');
const [port, auth, seconds, conc, path] = [Number(process.argv[1]), process.argv[2], Number(process.argv[3]), Number(process.argv[4]), process.argv[5]];
const agent = new http.Agent({ keepAlive: true, maxSockets: conc });
const headers = auth ? { authorization: auth } : {};
let n = 0; const end = Date.now() + seconds * 1000;
const one = () => new Promise((res) => { const r = http.request({ host: '127.0.0.1', port, path, agent, headers }, (x) => { if (x.statusCode !== 200) { x.resume(); throw new Error(String(x.statusCode)); } x.resume(); x.on('end', res); }); r.end(); });
Promise.all(Array.from({ length: conc }, async () => { while (Date.now() < end) { await one(); n++; } })).then(() => { process.stdout.write(String(n)); agent.destroy(); });
`;
const load = (port: number, auth: string, path: string, sec = 3) => new Promise<number>((res, rej) => execFile(process.execPath, ['-e', LOADER, String(port), auth, String(sec), '16', path], (e, o) => (e ? rej(e) : res(Number(o)))));
const open = await startTestNode({ security: false });
const sec = await startTestNode({ security: true });
const key = await sec.es.security.createApiKey({ name: 'bench' });
for (const t of [open, sec]) {
  await t.es.indices.create({ index: 'books' });
  await t.es.bulk({ refresh: true, operations: Array.from({ length: 200 }, (_, i) => [{ index: { _index: 'books', _id: String(i) } }, { title: `book ${i}`, year: 1900 + i }]).flat() });
}
const port = (u: string) => Number(new URL(u).port);
const path = '/books/_search?size=10';
const res: Record<string, number[]> = { open: [], apikey: [], basic: [] };
const basic = 'Basic ' + Buffer.from(`elastic:${ELASTIC_PASSWORD}`).toString('base64');
await load(port(open.url), '', path, 1); await load(port(sec.url), `ApiKey ${key.encoded}`, path, 1); await load(port(sec.url), basic, path, 1);
for (let i = 0; i < Number(process.env.R ?? 5); i++) {
  res.open.push((await load(port(open.url), '', path)) / 3);
  res.apikey.push((await load(port(sec.url), `ApiKey ${key.encoded}`, path)) / 3);
  res.basic.push((await load(port(sec.url), basic, path)) / 3);
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pairwise = res.apikey.map((x, i) => x / res.open[i]);
console.log(`ApiKey/open per round: ${pairwise.map((x) => x.toFixed(2)).join(' ')} (median ${med(pairwise).toFixed(2)})`);
console.log(Object.entries(res).map(([k, v]) => `${k} ${med(v).toFixed(0)} req/s (${(med(v) / med(res.open)).toFixed(2)}x) [${v.map((x) => x.toFixed(0)).join(' ')}]`).join('\n'));
await open.stop(); await sec.stop();
