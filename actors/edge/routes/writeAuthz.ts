import type { SearchServices } from '../../search/services';
import type { Authentication } from '../../wire/security';

/**
 * Authorization of document writes with ES's action names (AuthorizationService.authorizeBulkItems):
 * every write, single or in a bulk, runs as a shard-level `indices:data/write/bulk[s]` on its index,
 * whose items are checked one by one against the action their op type implies. So `create_doc`
 * allows `op_type: create` (and auto ids) but not an `index` that may overwrite.
 */

/** Every document op a write can carry. */
export type WriteOp = 'index' | 'create' | 'update' | 'delete';

/** The top-level action of a bulk request (a composite request: granted on some index at all). */
export const BULK_ACTION = 'indices:data/write/bulk';
/** The shard-level action every write runs as, checked on the index. */
export const BULK_SHARD_ACTION = 'indices:data/write/bulk[s]';
/** Creating a missing index on the first write (ES AutoCreateAction). */
export const AUTO_CREATE_ACTION = 'indices:admin/auto_create';

/** ES AuthorizationService.getAction: the action an item's op type implies. */
export function impliedAction(op: WriteOp): string {
  switch (op) {
    case 'index':
      return 'indices:data/write/index:op_type/index';
    case 'create':
      return 'indices:data/write/index:op_type/create';
    case 'update':
      return 'indices:data/write/update';
    default:
      return 'indices:data/write/delete';
  }
}

/** Throws ES's 403 when the caller may not run `action` on `index` (no-op with security off). */
export async function authorizeOn(s: SearchServices, auth: Authentication | undefined, action: string, index: string): Promise<void> {
  if (s.security) await s.security.authorize(auth, action, [index]);
}

/** The shard-level check and the item's implied action, in ES's order. */
export async function authorizeWrite(s: SearchServices, auth: Authentication | undefined, op: WriteOp, index: string): Promise<void> {
  await authorizeOn(s, auth, BULK_SHARD_ACTION, index);
  await authorizeOn(s, auth, impliedAction(op), index);
}
