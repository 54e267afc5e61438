import { illegalArgument } from '../wire/esErrors';

/**
 * ES's disk watermarks (DiskThresholdSettings, ES 8): `cluster.routing.allocation.disk.watermark.low`
 * (85%), `.high` (90%), `.flood_stage` (95%), each a used percentage / ratio or an absolute amount of
 * free space ("10gb": at least that much free), and their `.max_headroom` (200GB / 150GB / 100GB by
 * default, -1 as soon as any watermark is set explicitly) that caps the free space a percentage asks
 * for on large disks. Here they apply to the room the document log has: the JetStream store (and,
 * for an embedded nats-server, the disk under it). Pure functions: floodStage.ts applies them.
 */
export const DISK = 'cluster.routing.allocation.disk.';
export const WATERMARK_KEYS = {
  enabled: `${DISK}threshold_enabled`,
  low: `${DISK}watermark.low`,
  high: `${DISK}watermark.high`,
  flood: `${DISK}watermark.flood_stage`,
  lowHeadroom: `${DISK}watermark.low.max_headroom`,
  highHeadroom: `${DISK}watermark.high.max_headroom`,
  floodHeadroom: `${DISK}watermark.flood_stage.max_headroom`,
} as const;
/** How often the room is looked at (ES's `cluster.info.update.interval`, 30s there; 1s here, see README). */
export const INFO_INTERVAL_KEY = 'cluster.info.update.interval';

/** A watermark: a used ratio (0..1) or an absolute number of free bytes. */
export type Watermark = { ratio: number; text: string } | { freeBytes: number; text: string };

export interface DiskThresholds {
  enabled: boolean;
  low: Watermark;
  high: Watermark;
  flood: Watermark;
  /** -1: none. */
  lowHeadroom: number;
  highHeadroom: number;
  floodHeadroom: number;
}

export type DiskLevel = 'ok' | 'low' | 'high' | 'flood';

const GB = 1024 ** 3;
const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: GB, tb: 1024 ** 4, pb: 1024 ** 5 };

/** ES ByteSizeValue.parseBytesSizeValue (units required; -1 allowed: none). */
export function parseBytes(value: string, key: string): number {
  const s = value.trim().toLowerCase();
  if (s === '-1') return -1;
  if (s === '0') return 0;
  const m = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb|tb|pb|k|m|g|t|p)?$/.exec(s);
  if (!m || m[2] === undefined) {
    throw new Error(`failed to parse setting [${key}] with value [${value}] as a size in bytes: unit is missing or unrecognized`);
  }
  const unit = m[2].length === 1 && m[2] !== 'b' ? `${m[2]}b` : m[2];
  return Math.floor(Number(m[1]) * UNITS[unit]);
}

/**
 * ES RelativeByteSizeValue.parseRelativeByteSizeValue: unless it ends in `b`, a percentage (`85%`)
 * or a ratio (`0.85`; `0` means zero free bytes) is tried first, then a byte size (`500mb`: free bytes).
 */
export function parseWatermark(value: string, key: string): Watermark {
  const s = value.trim();
  if (!s.endsWith('b')) {
    const pct = s.endsWith('%');
    const n = Number(pct ? s.slice(0, -1) : s);
    if ((pct ? s.length > 1 : s.length > 0) && Number.isFinite(n) && n >= 0 && n <= (pct ? 100 : 1)) {
      if (n !== 0 || pct) return { ratio: pct ? n / 100 : n, text: s };
      return { freeBytes: 0, text: s };
    }
  }
  try {
    return { freeBytes: parseBytes(s, key), text: s };
  } catch {
    throw illegalArgument(`unable to parse [${key}=${value}] as either percentage or bytes`);
  }
}

const isRatio = (w: Watermark): w is { ratio: number; text: string } => 'ratio' in w;

/** Reads and checks the watermark settings (ES's WatermarkValidator and MaxHeadroomValidator). */
export function diskThresholds(get: (key: string) => unknown): DiskThresholds {
  const raw = (k: string) => {
    const v = get(k);
    return v === undefined || v === null ? undefined : String(v);
  };
  const explicit = [WATERMARK_KEYS.low, WATERMARK_KEYS.high, WATERMARK_KEYS.flood].some((k) => raw(k) !== undefined);
  const low = parseWatermark(raw(WATERMARK_KEYS.low) ?? '85%', WATERMARK_KEYS.low);
  const high = parseWatermark(raw(WATERMARK_KEYS.high) ?? '90%', WATERMARK_KEYS.high);
  const flood = parseWatermark(raw(WATERMARK_KEYS.flood) ?? '95%', WATERMARK_KEYS.flood);
  const headroom = (k: string, dflt: number) => {
    const v = raw(k);
    if (v === undefined) return explicit ? -1 : dflt;
    const n = parseBytes(v, k);
    if (n < 0) throw illegalArgument('setting a headroom value to less than 0 is not supported');
    return n;
  };
  const text = (k: string, n: number) => raw(k) ?? (n === -1 ? '-1' : `${n / GB}gb`);
  const t: DiskThresholds = {
    enabled: raw(WATERMARK_KEYS.enabled) !== 'false',
    low,
    high,
    flood,
    lowHeadroom: headroom(WATERMARK_KEYS.lowHeadroom, 200 * GB),
    highHeadroom: headroom(WATERMARK_KEYS.highHeadroom, 150 * GB),
    floodHeadroom: headroom(WATERMARK_KEYS.floodHeadroom, 100 * GB),
  };
  validate(t, [text(WATERMARK_KEYS.lowHeadroom, t.lowHeadroom), text(WATERMARK_KEYS.highHeadroom, t.highHeadroom), text(WATERMARK_KEYS.floodHeadroom, t.floodHeadroom)]);
  return t;
}

/** `texts`: the headrooms as written (ES prints getStringRep). */
function validate(t: DiskThresholds, texts: string[]): void {
  const { low, high, flood } = t;
  if (isRatio(low) && isRatio(high) && isRatio(flood)) {
    if (low.ratio > high.ratio) throw illegalArgument(`low disk watermark [${low.text}] more than high disk watermark [${high.text}]`);
    if (high.ratio > flood.ratio) throw illegalArgument(`high disk watermark [${high.text}] more than flood stage disk watermark [${flood.text}]`);
  } else if (!isRatio(low) && !isRatio(high) && !isRatio(flood)) {
    if (low.freeBytes < high.freeBytes) throw illegalArgument(`low disk watermark [${low.text}] less than high disk watermark [${high.text}]`);
    if (high.freeBytes < flood.freeBytes) throw illegalArgument(`high disk watermark [${high.text}] less than flood stage disk watermark [${flood.text}]`);
  } else {
    throw illegalArgument(
      `unable to consistently parse [${WATERMARK_KEYS.low}=${low.text}], [${WATERMARK_KEYS.high}=${high.text}], and [${WATERMARK_KEYS.flood}=${flood.text}] as percentage or bytes`,
    );
  }
  const [lh, hh, fh] = [t.lowHeadroom, t.highHeadroom, t.floodHeadroom];
  const [lt, ht, ft] = texts;
  if (!isRatio(low) && (lh !== -1 || hh !== -1 || fh !== -1)) {
    throw illegalArgument(
      `At least one of the disk max headroom settings is set [low=${lt}, high=${ht}, flood=${ft}], while the disk watermark values are set to absolute values instead of ratios/percentages, e.g., the low watermark is [${low.text}]`,
    );
  }
  if (lh !== -1 && hh === -1) throw illegalArgument(`high disk max headroom [${ht}] is not set, while the low disk max headroom is set [${lt}]`);
  if (hh !== -1 && fh === -1) throw illegalArgument(`flood disk max headroom [${ft}] is not set, while the high disk max headroom is set [${ht}]`);
  if (lh !== -1 && hh > lh) throw illegalArgument(`high disk max headroom [${ht}] more than low disk max headroom [${lt}]`);
  if (hh !== -1 && fh > hh) throw illegalArgument(`flood disk max headroom [${ft}] more than high disk max headroom [${ht}]`);
}

/**
 * Free bytes a watermark asks for on a store of `total` bytes (ES getFreeBytesThreshold with
 * RelativeByteSizeValue.calculateValue: a ratio's used bytes, raised to `total - headroom` when a
 * headroom applies).
 */
export function freeBytesThreshold(total: number, w: Watermark, headroom: number): number {
  if (!isRatio(w)) return w.freeBytes;
  const usedAt = Math.ceil(w.ratio * total);
  return total - (headroom >= 0 ? Math.max(usedAt, total - headroom) : usedAt);
}

/** The highest watermark a store with `free` of `total` bytes has passed. */
export function diskLevel(t: DiskThresholds, total: number, free: number): DiskLevel {
  if (free < freeBytesThreshold(total, t.flood, t.floodHeadroom)) return 'flood';
  if (free < freeBytesThreshold(total, t.high, t.highHeadroom)) return 'high';
  if (free < freeBytesThreshold(total, t.low, t.lowHeadroom)) return 'low';
  return 'ok';
}

/** Checks a change of cluster settings against the current ones (PUT /_cluster/settings); throws ES's 400. */
export function checkDiskSettings(current: (key: string) => unknown, changes: Record<string, unknown>): void {
  if (!Object.keys(changes).some((k) => k.startsWith(DISK))) return;
  const merged = (k: string) => (Object.hasOwn(changes, k) ? changes[k] : current(k));
  const enabled = merged(WATERMARK_KEYS.enabled);
  if (enabled !== undefined && enabled !== null && !['true', 'false'].includes(String(enabled))) {
    throw illegalArgument(`Failed to parse value [${String(enabled)}] as only [true] or [false] are allowed.`);
  }
  try {
    diskThresholds(merged);
  } catch (e) {
    if (e instanceof Error && !('status' in e)) throw illegalArgument(e.message);
    throw e;
  }
}
