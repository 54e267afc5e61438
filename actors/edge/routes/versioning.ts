import { EsError, illegalArgument } from '../../wire/esErrors';
import type { DocWrite } from '../../shard/engine/types';

/**
 * `version` / `version_type` of document writes and gets, as ES's VersionType and the requests'
 * validate(): external versions (`external`, `external_gte`) are set by the caller and checked
 * against the current one; internal versions are no longer a concurrency control for writes
 * (if_seq_no / if_primary_term are), but a get still checks one.
 */

export type VersionType = 'internal' | 'external' | 'external_gte';

/** The largest version a shard stores (its version column is 32-bit; see README Differences). */
export const MAX_STORED_VERSION = 4_294_967_295;

/** VersionType.fromString. */
export function parseVersionType(v: string | undefined): VersionType {
  if (v === undefined || v === 'internal') return 'internal';
  if (v === 'external' || v === 'external_gt') return 'external';
  if (v === 'external_gte') return 'external_gte';
  if (v === 'force') throw illegalArgument('version type [force] may no longer be used');
  throw illegalArgument(`No version type match [${v}]`);
}

function parseVersion(v: string | number | undefined): number | undefined {
  if (v === undefined) return undefined;
  const s = String(v);
  if (!/^-?\d+$/.test(s)) throw new EsError('illegal_argument_exception', 400, `Failed to parse long parameter [version] with value [${s}]`);
  return Number(s);
}

/**
 * The version fields of a write (index, create, delete), or the validation messages that refuse it
 * (IndexRequest/DeleteRequest.validate, in ES's order).
 */
export function writeVersion(
  op: DocWrite['op'], raw: { version?: string | number; versionType?: string; ifSeqNo?: unknown },
): { fields: Pick<DocWrite, 'version' | 'versionType'>; errors: string[] } {
  const type = parseVersionType(raw.versionType);
  const version = parseVersion(raw.version);
  const errors: string[] = [];
  const name = type.toUpperCase();
  if (op === 'create' && type !== 'internal') errors.push('create operations only support internal versioning. use index instead');
  if (type === 'internal' && version !== undefined) {
    errors.push('internal versioning can not be used for optimistic concurrency control. Please use `if_seq_no` and `if_primary_term` instead');
  }
  if (type !== 'internal' && (version === undefined || version < 0)) errors.push(`illegal version value [${version ?? -3}] for version type [${name}]`);
  if (type !== 'internal' && raw.ifSeqNo !== undefined) errors.push(`compare and write operations can not be used with version type [${name}]`);
  if (errors.length || type === 'internal') return { fields: {}, errors };
  if (version! > MAX_STORED_VERSION) {
    throw illegalArgument(`version [${version}] is larger than the largest version this node stores [${MAX_STORED_VERSION}]`);
  }
  return { fields: { version, versionType: type }, errors };
}

/** A get with `version`: the stored doc must have exactly that version (VersionType.isVersionConflictForReads). */
export function checkGetVersion(id: string, current: number, raw: { version?: string; versionType?: string }): void {
  parseVersionType(raw.versionType);
  const want = parseVersion(raw.version);
  if (want === undefined || want === current) return;
  throw new EsError('version_conflict_engine_exception', 409, `[${id}]: version conflict, current version [${current}] is different than the one provided [${want}]`);
}
