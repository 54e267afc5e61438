/**
 * Search rate with each kind of credential (Basic, Bearer access token, ApiKey, service account
 * token) on a node with security on, next to a node with security off: two whole nodes, load from
 * a child process (16 connections), interleaved rounds. Used by the bench's security section and
 * by scripts/securitySearchBench.ts.
 */
import { startTestNode, ELASTIC_PASSWORD, type TestNode } from '../../test/support/node';
import { onAbort } from './cleanup';
import { httpRate, portOf } from './load';

export const CREDENTIALS = ['open', 'basic', 'bearer', 'apikey', 'service'] as const;
export type Credential = (typeof CREDENTIALS)[number];

/** fleet-server's service account may read `profiling-*`, so every credential can search it. */
const INDEX = 'profiling-bench';

/** Per credential, per round: search rate, and the node process's CPU per search (µs). */
export interface AuthRates {
  rates: Record<Credential, number[]>;
  cpuUs: Record<Credential, number[]>;
}

/**
 * Rounds alternate the order of the credentials (forward, then backward), so a drift of the shared
 * machine's load during a round weighs on every credential alike; ratios are taken per round.
 */
export async function authSearchRates(o: { rounds: number; seconds: number; docs?: number; note?: (l: string) => void }): Promise<AuthRates> {
  const nodes: TestNode[] = [];
  const off = onAbort(() => Promise.all(nodes.map((n) => n.stop())));
  try {
    nodes.push(await startTestNode({ security: false }));
    nodes.push(await startTestNode({ security: true }));
    const [open, sec] = nodes;
    for (const t of nodes) {
      await t.es.indices.create({ index: INDEX });
      const docs = o.docs ?? 200;
      await t.es.bulk({ refresh: true, operations: Array.from({ length: docs }, (_, i) => [{ index: { _index: INDEX, _id: String(i) } }, { title: `book ${i}`, year: 1900 + i }]).flat() });
    }
    const key = await sec.es.security.createApiKey({ name: 'bench' });
    const token = await sec.es.security.getToken({ grant_type: 'client_credentials' });
    const service = await sec.es.security.createServiceToken({ namespace: 'elastic', service: 'fleet-server', name: 'bench' });
    const auth: Record<Credential, string> = {
      open: '',
      basic: 'Basic ' + Buffer.from(`elastic:${ELASTIC_PASSWORD}`).toString('base64'),
      bearer: `Bearer ${token.access_token}`,
      apikey: `ApiKey ${key.encoded}`,
      service: `Bearer ${service.token.value}`,
    };
    const path = `/${INDEX}/_search?size=10`;
    const load = async (c: Credential, seconds: number) => {
      const cpu0 = process.cpuUsage(); // both nodes run in this process; only one is loaded at a time
      const r = await httpRate(portOf(c === 'open' ? open.url : sec.url), { path, auth: auth[c] || undefined, seconds, conc: 16 });
      const cpu = process.cpuUsage(cpu0);
      if (r.bad) throw new Error(`${c}: ${r.bad} of ${r.n} searches failed`);
      return { rate: r.rate, cpuUs: (cpu.user + cpu.system) / r.n };
    };
    for (const c of CREDENTIALS) await load(c, 1); // warm every path (caches, JIT)
    const empty = () => Object.fromEntries(CREDENTIALS.map((c) => [c, [] as number[]])) as Record<Credential, number[]>;
    const out: AuthRates = { rates: empty(), cpuUs: empty() };
    for (let r = 0; r < o.rounds; r++) {
      o.note?.(`security: search rates, round ${r + 1}/${o.rounds} ...`);
      for (const c of r % 2 ? [...CREDENTIALS].reverse() : CREDENTIALS) {
        const x = await load(c, o.seconds);
        out.rates[c].push(x.rate);
        out.cpuUs[c].push(x.cpuUs);
      }
    }
    return out;
  } finally {
    off();
    for (const n of nodes) await n.stop();
  }
}
