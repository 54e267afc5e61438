/**
 * CPU profiles of this process (where the bench's node runs) while a child loader drives it, turned
 * into work counts: µs of CPU per request, per function (self time) and per source file. Two
 * workloads profiled in turn can be compared line by line: what the second costs that the first
 * does not (scripts/profile.ts prints that).
 */
import { Session } from 'node:inspector/promises';
import { writeFile } from 'node:fs/promises';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Self time of one profile, µs per request, by function and by file. */
export interface WorkCount {
  requests: number;
  /** Process CPU (user + system) per request, µs. */
  cpuUs: number;
  /** Sampled time per request (idle excluded), µs. */
  sampledUs: number;
  byFunction: Map<string, number>;
  byFile: Map<string, number>;
}

const short = (url: string) => url.replace(/^file:\/\//, '').replace(/^.*\/(node_modules\/)/, '$1').replace(/^.*\/wt\/[^/]+\//, '').replace(/^\/work\/main\//, '');

/** Self time by function and by file, µs per request (`(idle)` and `(program)` left out of the sum). */
function count(p: Profile, requests: number, intervalUs: number): Pick<WorkCount, 'sampledUs' | 'byFunction' | 'byFile'> {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  // Each sample weighs one interval, whatever wall time passed since the last: on a loaded machine
  // the thread is often descheduled (a socket write wakes the reader), and the time deltas would
  // charge that wait to the frame it stopped in. Samples are taken only while the thread runs.
  for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + intervalUs);
  const byFunction = new Map<string, number>();
  const byFile = new Map<string, number>();
  let sampled = 0;
  for (const [id, us] of self) {
    const f = byId.get(id)!.callFrame;
    if (f.functionName === '(idle)') continue;
    sampled += us;
    const file = f.url ? short(f.url) : f.functionName.startsWith('(') ? f.functionName : '(native)';
    const key = `${f.functionName || '(anonymous)'} ${f.url ? `${file}:${f.lineNumber + 1}` : ''}`.trim();
    byFunction.set(key, (byFunction.get(key) ?? 0) + us / requests);
    byFile.set(file, (byFile.get(file) ?? 0) + us / requests);
  }
  return { sampledUs: sampled / requests, byFunction, byFile };
}

/**
 * Runs `work` under the profiler; `work` resolves with how many requests it made. The profile is
 * written to `out` when given (open it in Chrome DevTools).
 */
export async function profiled(work: () => Promise<number>, out?: string, intervalUs = 200): Promise<WorkCount> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: intervalUs });
    await session.post('Profiler.start');
    const cpu0 = process.cpuUsage();
    const requests = await work();
    const cpu = process.cpuUsage(cpu0);
    const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: Profile };
    if (out) await writeFile(out, JSON.stringify(profile));
    return { requests, cpuUs: (cpu.user + cpu.system) / requests, ...count(profile, requests, intervalUs) };
  } finally {
    session.disconnect();
  }
}

const pad = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s.padEnd(n));

/** The top entries of a map, as lines `  12.3 µs  name`. */
export function top(m: Map<string, number>, n: number): string[] {
  return [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `  ${v.toFixed(1).padStart(8)} µs  ${k}`);
}

/** Lines of what `b` costs per request more than `a` (largest first), by function or file. */
export function diff(a: Map<string, number>, b: Map<string, number>, n: number, width = 100): string[] {
  const keys = new Set([...a.keys(), ...b.keys()]);
  const d = [...keys].map((k) => [k, (b.get(k) ?? 0) - (a.get(k) ?? 0), a.get(k) ?? 0, b.get(k) ?? 0] as const);
  return d
    .sort((x, y) => y[1] - x[1])
    .slice(0, n)
    .map(([k, dv, av, bv]) => `  ${dv.toFixed(1).padStart(8)} µs  (${av.toFixed(1).padStart(7)} → ${bv.toFixed(1).padStart(7)})  ${pad(k, width)}`);
}
