/**
 * Sends fuzz cases (fuzzCases.ts) to a node and classifies the outcomes: a status (2xx/4xx are
 * fine, 5xx is a finding), a hang (no complete answer within the per-request timeout) or a
 * connection the server closed (fine for raw garbage). A 4xx whose body is not one Elasticsearch
 * gives (fuzzShape.ts) is a finding, and so is a status other than a case's `expect`. Shared by `npm run fuzz` and the seeded
 * jest sample (test/e2e/fuzz.test.ts).
 */
import { request, Agent } from 'node:http';
import { connect } from 'node:net';
import { caseAt, type Fixtures, type FuzzCase } from './fuzzCases';
import { esShaped4xx, firstAnswer } from './fuzzShape';
import { toJson } from './fuzzValues';

export interface Outcome {
  i: number;
  label: string;
  /** HTTP status, 0 when the server closed without answering. */
  status: number;
  hang: boolean;
  ms: number;
  /** First bytes of the answer (findings only). */
  answer?: string;
  /** The whole body (http) or the first answer's body (raw), for the shape check. */
  body?: string;
}

export interface Finding {
  i: number;
  label: string;
  what: '5xx' | 'hang' | 'status' | 'shape';
  request: string;
  answer: string;
}

export interface RunReport {
  seed: number;
  sent: number;
  byStatus: Record<string, number>;
  byLabel: Record<string, { sent: number; s4xx: number; s5xx: number; hangs: number }>;
  fiveXX: number;
  hangs: number;
  /** Answers with a status the case does not allow (its `expect`). */
  unexpected: number;
  /** 4xx answers without Elasticsearch's error body. */
  unshaped: number;
  /** 503s of a request racing the creation of a scratch index (not findings: see {@link racedCreation}). */
  races: number;
  findings: Finding[];
  seconds: number;
}

const MAX_ANSWER = 4 * 1024 * 1024;

function sendHttp(url: string, c: Extract<FuzzCase, { kind: 'http' }>, timeoutMs: number, agent: Agent): Promise<Omit<Outcome, 'i' | 'label'>> {
  const start = Date.now();
  return new Promise((resolve) => {
    let done = false;
    const finish = (o: Omit<Outcome, 'i' | 'label' | 'ms'>) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({ ...o, ms: Date.now() - start });
    };
    const headers: Record<string, string> = { ...c.headers };
    if (c.body) headers['content-length'] = String(c.body.length);
    let req: ReturnType<typeof request>;
    try {
      req = request(`${url}${c.path}`, { method: c.method, headers, agent }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (d: Buffer) => {
          size += d.length;
          if (size <= MAX_ANSWER) chunks.push(d);
        });
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          finish({ status: res.statusCode ?? 0, hang: false, answer: text.slice(0, 2000), body: text });
        });
        res.on('error', () => finish({ status: res.statusCode ?? 0, hang: false }));
      });
    } catch (e) {
      // the client refused to send it (invalid header characters): nothing reached the node
      finish({ status: -1, hang: false, answer: (e as Error).message });
      return;
    }
    const timer = setTimeout(() => {
      req.destroy();
      finish({ status: 0, hang: true });
    }, timeoutMs);
    req.on('error', () => finish({ status: 0, hang: false }));
    req.end(c.body);
  });
}

function sendRaw(port: number, c: Extract<FuzzCase, { kind: 'raw' }>, timeoutMs: number): Promise<Omit<Outcome, 'i' | 'label'>> {
  const start = Date.now();
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let out = '';
    let done = false;
    const finish = (hang: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      s.destroy();
      // the worst status among the (possibly pipelined) answers
      const statuses = [...out.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
      resolve({ status: statuses.length ? Math.max(...statuses) : 0, hang, ms: Date.now() - start, answer: out.slice(0, 2000), body: firstAnswer(out)?.body });
    };
    const timer = setTimeout(() => finish(true), timeoutMs);
    s.on('data', (d) => {
      if (out.length < MAX_ANSWER) out += d.toString('latin1');
      if (c.keepOpen && firstAnswer(out)) finish(false); // one request, its whole answer
    });
    s.on('error', () => finish(false));
    s.on('close', () => finish(false));
    if (c.keepOpen) s.write(c.bytes);
    else s.end(c.bytes);
  });
}

function describe(c: FuzzCase): string {
  if (c.kind === 'raw') return `raw ${JSON.stringify(c.bytes.toString('latin1').slice(0, 300))}`;
  const body = c.body ? ` ${JSON.stringify(c.body.toString('utf8', 0, 300))}${c.body.length > 300 ? `…(${c.body.length} bytes)` : ''}` : '';
  const enc = c.headers['content-encoding'] ? ` [content-encoding: ${c.headers['content-encoding']}]` : '';
  return `${c.method} ${c.path.slice(0, 300)}${enc}${body}`;
}

export interface RunOptions {
  url: string;
  seed: number;
  requests: number;
  concurrency: number;
  timeoutMs: number;
  /** Stop sending after this long (the report says how many were sent). */
  maxSeconds: number;
  fixtures: Fixtures;
  /** Called every `progressEvery` cases. */
  onProgress?: (sent: number, report: RunReport) => void;
  /** Only cases whose label is listed (all when absent). */
  labels?: string[];
  /** Index of the first case (default 0): cases `first .. first + requests - 1`. */
  first?: number;
}

/** Runs cases 0..requests-1 of the seed against the node at `url`. */
export async function runFuzz(o: RunOptions): Promise<RunReport> {
  const port = Number(new URL(o.url).port);
  const agent = new Agent({ keepAlive: true, maxSockets: o.concurrency });
  const started = Date.now();
  const report: RunReport = { seed: o.seed, sent: 0, byStatus: {}, byLabel: {}, fiveXX: 0, hangs: 0, unexpected: 0, unshaped: 0, races: 0, findings: [], seconds: 0 };
  const first = o.first ?? 0;
  let next = first;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= first + o.requests || Date.now() - started > o.maxSeconds * 1000) return;
      const c = caseAt(o.seed, i, o.fixtures);
      if (o.labels && !o.labels.includes(c.label)) continue;
      const r = c.kind === 'raw' ? await sendRaw(port, c, o.timeoutMs) : await sendHttp(o.url, c, o.timeoutMs, agent);
      record(report, { i, label: c.label, ...r }, c);
      if (o.onProgress && report.sent % 1000 === 0) o.onProgress(report.sent, report);
    }
  };
  await Promise.all(Array.from({ length: o.concurrency }, worker));
  agent.destroy();
  report.seconds = (Date.now() - started) / 1000;
  return report;
}

/**
 * A request that reached a scratch index while another request of the run was creating it: its only
 * copy still starting, every shard failed, ES's 503 (as ES answers a search that meets a primary still
 * initializing). Concurrent cases may create the scratch indices any of them names; not bad input.
 */
function racedCreation(r: Outcome): boolean {
  // a failure of 500 or more decides the status of a search whose shards all failed (ES's rule too), so
  // one starting copy makes the 503 whatever the other shards said (the whole body: the reasons come last)
  return r.status === 503 && /"reason":"\[(fzx|edgefz)-\d\]\[\d+\] copy on node \[[^\]]+\] is recovering"/.test(r.body ?? r.answer ?? '');
}

function record(report: RunReport, r: Outcome, c: FuzzCase): void {
  report.sent++;
  const cls = r.hang ? 'hang' : r.status <= 0 ? 'closed' : `${Math.floor(r.status / 100)}xx`;
  report.byStatus[cls] = (report.byStatus[cls] ?? 0) + 1;
  const l = (report.byLabel[r.label] ??= { sent: 0, s4xx: 0, s5xx: 0, hangs: 0 });
  l.sent++;
  if (r.status >= 400 && r.status < 500) l.s4xx++;
  const raced = racedCreation(r);
  if (raced) report.races++;
  else if (r.status >= 500) {
    l.s5xx++;
    report.fiveXX++;
    report.findings.push({ i: r.i, label: r.label, what: '5xx', request: describe(c), answer: `${r.status} ${r.answer ?? ''}`.slice(0, 600) });
  }
  if (r.hang) {
    l.hangs++;
    report.hangs++;
    report.findings.push({ i: r.i, label: r.label, what: 'hang', request: describe(c), answer: '' });
  }
  if (!r.hang && !raced && c.expect && !c.expect.includes(r.status)) {
    report.unexpected++;
    report.findings.push({ i: r.i, label: r.label, what: 'status', request: describe(c), answer: `${r.status} (expected ${c.expect.join('/')}) ${r.answer ?? ''}`.slice(0, 600) });
  }
  // a 4xx of a raw exchange is checked when it is the first answer (pipelined ones are not parsed)
  const shapeOf = c.kind === 'http' ? r.status : firstAnswer(r.answer ?? '')?.status;
  if (!r.hang && shapeOf !== undefined && shapeOf >= 400 && shapeOf < 500 && r.body !== undefined && !esShaped4xx(c.kind === 'http' ? c.method : 'GET', shapeOf, r.body)) {
    report.unshaped++;
    report.findings.push({ i: r.i, label: r.label, what: 'shape', request: describe(c), answer: `${shapeOf} ${r.body}`.slice(0, 600) });
  }
}

/** The report as text lines (counts, per-generator table, the first findings). */
export function formatReport(rep: RunReport, maxFindings = 25): string {
  const lines = [
    `seed ${rep.seed}: ${rep.sent} requests in ${rep.seconds.toFixed(1)} s — ${rep.fiveXX} 5xx, ${rep.hangs} hangs, ${rep.unexpected} unexpected statuses, ${rep.unshaped} 4xx not in ES's shape (${rep.races} 503s racing a scratch index's creation)`,
    `by status: ${toJson(rep.byStatus)}`,
    'generator        sent   4xx   5xx  hangs',
    ...Object.entries(rep.byLabel)
      .sort()
      .map(([k, v]) => `${k.padEnd(16)}${String(v.sent).padStart(5)}${String(v.s4xx).padStart(6)}${String(v.s5xx).padStart(6)}${String(v.hangs).padStart(7)}`),
  ];
  for (const f of rep.findings.slice(0, maxFindings)) lines.push(`  #${f.i} [${f.label}] ${f.what}: ${f.request}\n      -> ${f.answer}`);
  if (rep.findings.length > maxFindings) lines.push(`  … ${rep.findings.length - maxFindings} more`);
  return lines.join('\n');
}
