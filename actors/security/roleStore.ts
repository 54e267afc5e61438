import { v5 as uuidv5 } from 'uuid';
import type { Envelope } from '../../streams';
import type { AppPrivilegeDescriptor, StoredAppPrivileges } from './appPrivileges';
import { BUILTIN_ROLES } from './builtinRoles';
import { compileRoles } from './permission';
import { type RolePermission } from '../wire/security';
import type { RoleMapping } from './roleMappings';
import type { RoleDescriptor } from '../wire/security';

/** uuid v5 namespace of security aggregate ids derived from names (users, roles, role mappings). */
export const SECURITY_NS = '6f1d3c1e-5b0e-4c55-9a43-5a4b7e6a9d10';

/** Aggregate id of a role (`role`) or role mapping (`rolemapping`) by name: the same on every node. */
export const roleAggregateId = (kind: 'role' | 'rolemapping', name: string) => uuidv5(`${kind}:${name}`, SECURITY_NS);

/** Aggregate id (in the `role` aggregate) of an application privilege. */
export const privilegeAggregateId = (application: string, name: string) => uuidv5(`privilege:${application}/${name}`, SECURITY_NS);

/** Facts of the `role` aggregate: role definitions, role mappings and application privileges. */
export type RoleFact =
  | Envelope<'role.created' | 'role.updated', { name: string; descriptor: RoleDescriptor }>
  | Envelope<'role.deleted', { name: string }>
  | Envelope<'role.mapping_created' | 'role.mapping_updated', { name: string; mapping: RoleMapping }>
  | Envelope<'role.mapping_deleted', { name: string }>
  | Envelope<'role.privilege_created' | 'role.privilege_updated', AppPrivilegeDescriptor>
  | Envelope<'role.privilege_deleted', { application: string; name: string }>;

/**
 * Built-in and native roles plus role mappings, folded from `role.*` facts. Compiled permissions are
 * memoized per role-name set (and per descriptor object for API keys) and dropped on any change.
 */
export class RoleStore {
  private readonly roles = new Map<string, RoleDescriptor>();
  readonly mappings = new Map<string, RoleMapping>();
  private readonly appPrivileges = new Map<string, Map<string, AppPrivilegeDescriptor>>();
  private readonly seqs = new Map<string, number>();
  private readonly byNames = new Map<string, RolePermission>();
  private byDescriptors = new WeakMap<object, RolePermission>();
  private readonly listeners: Array<() => void> = [];

  /** Called after every change (the module clears credential caches). */
  onChange(f: () => void): void {
    this.listeners.push(f);
  }

  isReserved(name: string): boolean {
    return Object.hasOwn(BUILTIN_ROLES, name);
  }

  get(name: string): RoleDescriptor | undefined {
    return Object.hasOwn(BUILTIN_ROLES, name) ? BUILTIN_ROLES[name] : this.roles.get(name);
  }

  /** Every role: reserved first, then native, by name. */
  all(): Record<string, RoleDescriptor> {
    const out: Record<string, RoleDescriptor> = { ...BUILTIN_ROLES };
    for (const n of [...this.roles.keys()].sort()) out[n] = this.roles.get(n)!;
    return out;
  }

  /** Native roles (PUT /_security/role) in the order they were created, with their names. */
  native(): Array<{ name: string; descriptor: RoleDescriptor }> {
    return [...this.roles].map(([name, descriptor]) => ({ name, descriptor }));
  }

  /** The descriptors of the named roles that exist. */
  descriptorsFor(names: readonly string[]): Record<string, RoleDescriptor> {
    const out: Record<string, RoleDescriptor> = {};
    for (const n of names) {
      const d = this.get(n);
      if (d) out[n] = d;
    }
    return out;
  }

  /** The compiled permission of a set of role names (unknown names are skipped, as ES). */
  permissionFor(names: readonly string[]): RolePermission {
    const key = [...names].sort().join('\u0000');
    let p = this.byNames.get(key);
    if (!p) this.byNames.set(key, (p = compileRoles(this.descriptorsFor(names), this.appPrivileges)));
    return p;
  }

  /** The compiled permission of a descriptor map (API keys; interned maps hit the memo). */
  permissionForDescriptors(d: Record<string, RoleDescriptor>): RolePermission {
    let p = this.byDescriptors.get(d);
    if (!p) this.byDescriptors.set(d, (p = compileRoles(d, this.appPrivileges)));
    return p;
  }

  /** Stored application privileges by application, then name (roles resolve their names against them). */
  get privileges(): StoredAppPrivileges {
    return this.appPrivileges;
  }

  seqOf(aggregateId: string): number {
    return this.seqs.get(aggregateId) ?? 0;
  }

  /** Folds one `role.*` fact (idempotent by seq). */
  apply(e: Envelope): void {
    if (e.seq <= this.seqOf(e.aggregateId)) return;
    this.seqs.set(e.aggregateId, e.seq);
    const f = e as RoleFact;
    switch (f.type) {
      case 'role.created':
      case 'role.updated':
        this.roles.set(f.data.name, f.data.descriptor);
        break;
      case 'role.deleted':
        this.roles.delete(f.data.name);
        break;
      case 'role.mapping_created':
      case 'role.mapping_updated':
        this.mappings.set(f.data.name, f.data.mapping);
        break;
      case 'role.mapping_deleted':
        this.mappings.delete(f.data.name);
        break;
      case 'role.privilege_created':
      case 'role.privilege_updated': {
        const { application, name, actions, metadata } = f.data;
        let app = this.appPrivileges.get(application);
        if (!app) this.appPrivileges.set(application, (app = new Map()));
        app.set(name, { application, name, actions, metadata });
        break;
      }
      case 'role.privilege_deleted': {
        const app = this.appPrivileges.get(f.data.application);
        app?.delete(f.data.name);
        if (app && !app.size) this.appPrivileges.delete(f.data.application);
        break;
      }
      default:
        return;
    }
    this.changed();
  }

  private changed() {
    this.byNames.clear();
    this.byDescriptors = new WeakMap();
    for (const l of this.listeners) l();
  }
}
