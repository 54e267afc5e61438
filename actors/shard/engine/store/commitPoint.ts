/**
 * Commit points of a shard copy's directory (Lucene's segments_N): which segment files and
 * deletion files make up the copy, what part of the document log they hold, and the segments that
 * open contexts pin. A commit is written to a temporary file, fsynced and renamed, and the
 * directory fsynced: a crash leaves the previous commit or the new one, never half of one. Files
 * no kept commit names are garbage (a flush or merge that did not reach its commit).
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SegmentMeta } from '../segments';
import { syncDirSync } from '../segments/fileWriter';

export interface CommittedSegment {
  meta: SegmentMeta;
  /** Deletions file (`<name>_<gen>.del`), absent while the segment has none. */
  del?: string;
}

export interface CommitPoint {
  gen: number;
  /** Segments in seqNo order (the shard's doc order). */
  segments: CommittedSegment[];
  /** Highest seqNo the segments hold (ops after it are replayed from the document log). */
  seqNo: number;
  /** Document log (stream) sequence of the last message whose ops the segments hold. */
  applied: number;
  /** Next segment number (names are never reused). */
  nextSegment: number;
  /** Searchers that open contexts pin, with the segments each reads (some may no longer be live). */
  pins: Array<{ seqNo: number; contexts: string[]; segments: CommittedSegment[] }>;
  /** Largest seqNo of a deletion a merge dropped: searchers older than it need their pinned segments. */
  droppedThrough: number;
  time: number;
  /** The document log followed (its stream's creation time). */
  logId?: string;
}

const COMMIT = /^commit_(\d+)\.json$/;
/** Commits kept: the newest only (Lucene's KeepOnlyLastCommitDeletionPolicy); its write is atomic. */
const KEEP = 1;

/** fsyncs a directory (a rename in it is durable), where the file system lets one. */
export function syncDir(dir: string): void {
  try {
    syncDirSync(dir);
  } catch {
    // some file systems refuse a directory fsync: the rename is still atomic
  }
}

/** Writes a file durably under its final name (temp, fsync, rename, directory fsync). */
export function writeDurable(dir: string, name: string, data: string | Uint8Array): void {
  const tmp = join(dir, `${name}.tmp`);
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeFileSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, join(dir, name));
  syncDir(dir);
}

/** The commit generations in a directory, newest first. */
export function commitGens(dir: string): number[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((f) => COMMIT.exec(f))
    .filter((m): m is RegExpExecArray => !!m)
    .map((m) => Number(m[1]))
    .sort((a, b) => b - a);
}

/** The newest readable commit of a directory (a damaged one is skipped), or undefined. */
export function readCommit(dir: string): CommitPoint | undefined {
  for (const gen of commitGens(dir)) {
    try {
      const c = JSON.parse(readFileSync(join(dir, `commit_${gen}.json`), 'utf8')) as CommitPoint;
      if (c.gen === gen && Array.isArray(c.segments)) return c;
    } catch {
      /* damaged: try the one before */
    }
  }
  return undefined;
}

/** Writes commit `c` durably and drops commits older than the kept ones. */
export function writeCommit(dir: string, c: CommitPoint): void {
  mkdirSync(dir, { recursive: true });
  writeDurable(dir, `commit_${c.gen}.json`, JSON.stringify(c));
  for (const gen of commitGens(dir).slice(KEEP)) {
    try {
      unlinkSync(join(dir, `commit_${gen}.json`));
    } catch {
      /* already gone */
    }
  }
}

/** Every file the kept commits name (segments and deletions). */
export function referencedFiles(dir: string): Set<string> {
  const out = new Set<string>();
  for (const gen of commitGens(dir).slice(0, KEEP)) {
    try {
      const c = JSON.parse(readFileSync(join(dir, `commit_${gen}.json`), 'utf8')) as CommitPoint;
      out.add(`commit_${gen}.json`);
      for (const s of [...c.segments, ...c.pins.flatMap((p) => p.segments)]) {
        out.add(`${s.meta.name}.seg`);
        if (s.del) out.add(s.del);
      }
    } catch {
      /* damaged */
    }
  }
  return out;
}

/**
 * Deletes files of a shard directory that no kept commit names and `inUse` does not hold
 * (leftovers of a crash, segments merged away, older deletion files). Returns the names deleted.
 */
export function deleteUnreferenced(dir: string, inUse: Set<string>): string[] {
  if (!existsSync(dir)) return [];
  const keep = referencedFiles(dir);
  const gone: string[] = [];
  for (const f of readdirSync(dir)) {
    if (keep.has(f) || inUse.has(f)) continue;
    if (!/\.(seg|del|tmp)$/.test(f) && !/^commit_\d+\.json/.test(f)) continue;
    try {
      unlinkSync(join(dir, f));
      gone.push(f);
    } catch {
      /* in use elsewhere or gone */
    }
  }
  return gone;
}
