import { readdirSync, readFileSync, statfsSync } from 'node:fs';
import os from 'node:os';
import { PerformanceObserver, constants as perfConstants } from 'node:perf_hooks';
import v8 from 'node:v8';
import type { Server } from 'node:http';

/**
 * What the process and its host say about themselves, under Elasticsearch's keys: the Node
 * runtime stands in for the JVM (V8 heap as `jvm.mem.heap_*`, V8's new space as the young pool
 * and the old spaces as the old pool, scavenges as the `young` collector and mark-compacts as
 * `old`), the event loop for `jvm.threads`. Everything here is this process; remote nodes will
 * report their own (see nodes.ts).
 */

const started = Date.now();

/** GC counts and times, by ES collector name. */
const gc = { young: { count: 0, ms: 0 }, old: { count: 0, ms: 0 } };
let gcObserver: PerformanceObserver | undefined;

/** Starts counting garbage collections (once per process; the observer never holds the loop open). */
export function watchGc(): void {
  if (gcObserver) return;
  gcObserver = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind ?? (e as unknown as { kind?: number }).kind;
      const c = kind === perfConstants.NODE_PERFORMANCE_GC_MINOR ? gc.young : gc.old;
      c.count++;
      c.ms += e.duration;
    }
  });
  gcObserver.observe({ entryTypes: ['gc'] });
}

/** HTTP connection counters of the edge (ES `http.current_open`, `http.total_opened`). */
const http = { server: undefined as Server | undefined, opened: 0 };

/** Counts the edge's connections from now on (actors/system.ts calls it once the edge listens). */
export function watchHttp(server: Server): void {
  if (http.server === server) return;
  http.server = server;
  http.opened = 0;
  server.on('connection', () => http.opened++);
}

/** Port the edge listens on (undefined before watchHttp). */
export function httpPort(): number | undefined {
  const a = http.server?.address();
  return a && typeof a === 'object' ? a.port : undefined;
}

export async function httpStats(): Promise<{ current_open: number; total_opened: number }> {
  const server = http.server;
  const current = server ? await new Promise<number>((r) => server.getConnections((e, n) => r(e ? 0 : n))) : 0;
  return { current_open: current, total_opened: Math.max(http.opened, current) };
}

let lastCpu = { at: Date.now(), usage: process.cpuUsage() };
/** Process CPU percent since the previous call (ES `process.cpu.percent`). */
function cpuPercent(): number {
  const now = Date.now();
  const usage = process.cpuUsage();
  const ms = (usage.user - lastCpu.usage.user + usage.system - lastCpu.usage.system) / 1000;
  const span = now - lastCpu.at;
  lastCpu = { at: now, usage };
  return span > 0 ? Math.min(100 * os.cpus().length, Math.round((100 * ms) / span)) : 0;
}

function openFileDescriptors(): number {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return -1;
  }
}

function maxFileDescriptors(): number {
  try {
    const m = /Max open files\s+(\d+)/.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m ? Number(m[1]) : -1;
  } catch {
    return -1;
  }
}

function swap(): { total_in_bytes: number; free_in_bytes: number; used_in_bytes: number } {
  try {
    const text = readFileSync('/proc/meminfo', 'utf8');
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0) * 1024;
    const total = kb('SwapTotal');
    const free = kb('SwapFree');
    return { total_in_bytes: total, free_in_bytes: free, used_in_bytes: total - free };
  } catch {
    return { total_in_bytes: 0, free_in_bytes: 0, used_in_bytes: 0 };
  }
}

const pct = (part: number, whole: number) => (whole > 0 ? Math.round((100 * part) / whole) : 0);

/** ES `os` section of node stats. */
export function osStats(): Record<string, unknown> {
  const total = os.totalmem();
  const free = os.freemem();
  const [l1, l5, l15] = os.loadavg();
  return {
    timestamp: Date.now(),
    cpu: { percent: Math.min(100, Math.round((100 * l1) / Math.max(1, os.cpus().length))), load_average: { '1m': l1, '5m': l5, '15m': l15 } },
    mem: { total_in_bytes: total, adjusted_total_in_bytes: total, free_in_bytes: free, used_in_bytes: total - free, free_percent: pct(free, total), used_percent: pct(total - free, total) },
    swap: swap(),
  };
}

/** ES `process` section of node stats. */
export function processStats(): Record<string, unknown> {
  const usage = process.cpuUsage();
  return {
    timestamp: Date.now(),
    open_file_descriptors: openFileDescriptors(),
    max_file_descriptors: maxFileDescriptors(),
    cpu: { percent: cpuPercent(), total_in_millis: Math.round((usage.user + usage.system) / 1000) },
    mem: { total_virtual_in_bytes: process.memoryUsage().rss },
  };
}

function spaces() {
  const by = new Map(v8.getHeapSpaceStatistics().map((s) => [s.space_name, s]));
  const sum = (names: string[], f: 'space_used_size' | 'space_size' | 'space_available_size') =>
    names.reduce((a, n) => a + (by.get(n)?.[f] ?? 0), 0);
  return { by, sum };
}

/** ES `jvm` section of node stats, from the V8 heap and GC observations. */
export function jvmStats(): Record<string, unknown> {
  const h = v8.getHeapStatistics();
  const { sum } = spaces();
  const young = ['new_space', 'new_large_object_space'];
  const old = ['old_space', 'large_object_space', 'code_space', 'code_large_object_space', 'shared_space', 'shared_large_object_space', 'read_only_space'];
  const pool = (names: string[]) => ({
    used_in_bytes: sum(names, 'space_used_size'),
    max_in_bytes: names === young ? sum(names, 'space_size') : h.heap_size_limit,
    peak_used_in_bytes: sum(names, 'space_used_size'),
    peak_max_in_bytes: names === young ? sum(names, 'space_size') : h.heap_size_limit,
  });
  const mem = process.memoryUsage();
  return {
    timestamp: Date.now(),
    uptime_in_millis: Date.now() - started,
    mem: {
      heap_used_in_bytes: h.used_heap_size,
      heap_used_percent: pct(h.used_heap_size, h.heap_size_limit),
      heap_committed_in_bytes: h.total_heap_size,
      heap_max_in_bytes: h.heap_size_limit,
      non_heap_used_in_bytes: mem.external + h.malloced_memory,
      non_heap_committed_in_bytes: mem.external + h.malloced_memory,
      pools: { young: pool(young), survivor: { used_in_bytes: 0, max_in_bytes: 0, peak_used_in_bytes: 0, peak_max_in_bytes: 0 }, old: pool(old) },
    },
    threads: { count: 1 + (process.env.UV_THREADPOOL_SIZE ? Number(process.env.UV_THREADPOOL_SIZE) : 4), peak_count: 1 + (process.env.UV_THREADPOOL_SIZE ? Number(process.env.UV_THREADPOOL_SIZE) : 4) },
    gc: {
      collectors: {
        young: { collection_count: gc.young.count, collection_time_in_millis: Math.round(gc.young.ms) },
        old: { collection_count: gc.old.count, collection_time_in_millis: Math.round(gc.old.ms) },
      },
    },
    buffer_pools: {
      mapped: { count: 0, used_in_bytes: 0, total_capacity_in_bytes: 0 },
      direct: { count: 0, used_in_bytes: mem.arrayBuffers, total_capacity_in_bytes: mem.arrayBuffers },
    },
    classes: { current_loaded_count: 0, total_loaded_count: 0, total_unloaded_count: 0 },
  };
}

/** ES `fs` section of node stats (the data directory's file system). */
export function fsStats(dataDir: string): Record<string, unknown> {
  let total = { total_in_bytes: 0, free_in_bytes: 0, available_in_bytes: 0 };
  try {
    const s = statfsSync(dataDir);
    total = { total_in_bytes: s.blocks * s.bsize, free_in_bytes: s.bfree * s.bsize, available_in_bytes: s.bavail * s.bsize };
  } catch {
    // not a local file system: zeros
  }
  return { timestamp: Date.now(), total, data: [{ path: dataDir, mount: dataDir, type: 'unknown', ...total }] };
}

/** ES `jvm` section of nodes info. */
export function jvmInfo(): Record<string, unknown> {
  const h = v8.getHeapStatistics();
  return {
    pid: process.pid,
    version: process.versions.node,
    vm_name: 'Node.js',
    vm_version: process.versions.v8,
    vm_vendor: 'OpenJS Foundation',
    bundled_jdk: false,
    using_bundled_jdk: null,
    start_time_in_millis: started,
    mem: {
      heap_init_in_bytes: h.total_heap_size,
      heap_max_in_bytes: h.heap_size_limit,
      non_heap_init_in_bytes: 0,
      non_heap_max_in_bytes: 0,
      direct_max_in_bytes: 0,
    },
    gc_collectors: ['young', 'old'],
    memory_pools: ['young', 'survivor', 'old'],
    using_compressed_ordinary_object_pointers: 'true',
    input_arguments: process.execArgv,
  };
}

/** ES `os` section of nodes info. */
export function osInfo(): Record<string, unknown> {
  const cpus = os.cpus().length;
  return {
    refresh_interval_in_millis: 1000,
    name: os.type(),
    pretty_name: os.type(),
    arch: os.arch(),
    version: os.release(),
    available_processors: cpus,
    allocated_processors: cpus,
  };
}

/** ES `process` section of nodes info. */
export const processInfo = (): Record<string, unknown> => ({ refresh_interval_in_millis: 1000, id: process.pid, mlockall: false });

export const uptimeMs = () => Date.now() - started;
