import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import type { EsRequest } from '../wire/rest';
import type { Authentication } from '../wire/security';
import { effectiveRoles } from './authorization';

/**
 * The security audit log, for run-as only (ES LoggingAuditTrail, the `logfile` output): with
 * `xpack.security.audit.enabled: true` a request that sends `es-security-runas-user` appends to
 * `<data dir>/logs/<cluster.name>_audit.json`, one JSON line each, with ES's field names: one
 * `run_as_granted` / `run_as_denied` (`user.name`/`user.realm` who authenticated, `user.run_as.name`/
 * `user.run_as.realm` the user run as, no realm when there is no such user, `user.roles` the
 * authenticating user's), then for each action authorized as the user an `access_granted` /
 * `access_denied` (`user.*` the user, `user.run_by.*` who authenticated); all with `action`,
 * `indices`, one `request.id` per request, `opaque_id`. No credential, header value other than these
 * names, or request body is written. Requests without run-as, authentication and security config
 * changes are not audited.
 */

export interface RunAsAuditEvent {
  granted: boolean;
  action: string;
  /** The realm that found the user run as (none when there is no such user). */
  lookupRealm?: string;
  indices?: string[];
}

export class AuditTrail {
  private out: WriteStream | undefined;

  constructor(
    private readonly opts: { enabled: boolean; dataDir: string; clusterName: string; nodeId: string; now?: () => number },
  ) {}

  get enabled(): boolean {
    return this.opts.enabled;
  }

  /** Where the lines go. */
  get path(): string {
    return join(this.opts.dataDir, 'logs', `${this.opts.clusterName}_audit.json`);
  }

  /** One request's id, shared by its lines (ES's `request.id`). */
  requestId(): string {
    return randomBytes(16).toString('base64url');
  }

  /** One `run_as_granted` / `run_as_denied` line (ES withRunAsSubject: `user.*` who authenticated, `user.run_as.*` the user). */
  runAs(auth: Authentication, req: EsRequest, requestId: string, e: RunAsAuditEvent): void {
    if (!this.opts.enabled || !auth.runAs) return;
    const by = auth.runAs;
    this.write({
      ...this.head(e.granted ? 'run_as_granted' : 'run_as_denied'),
      'user.name': by.user.username,
      'user.realm': auth.authenticationRealm.name,
      'user.run_as.name': auth.user.username,
      ...(e.lookupRealm !== undefined ? { 'user.run_as.realm': e.lookupRealm } : {}),
      'user.roles': effectiveRoles(by.permission), // ES: the authenticating subject's resolved roles
      ...(by.apiKey ? { 'apikey.id': by.apiKey.id, ...(by.apiKey.name !== null ? { 'apikey.name': by.apiKey.name } : {}) } : {}),
      ...this.tail(req, requestId, e),
    });
  }

  /**
   * One `access_granted` / `access_denied` line for an action authorized as the run-as user (ES
   * withAuthentication: `user.*` the user and its lookup realm, `user.run_by.*` who authenticated; an
   * API key that ran as the user is named by `apikey.*` instead, as ES does).
   */
  access(auth: Authentication, req: EsRequest, requestId: string, e: { granted: boolean; action: string; indices?: string[] }): void {
    if (!this.opts.enabled || !auth.runAs) return;
    const by = auth.runAs;
    this.write({
      ...this.head(e.granted ? 'access_granted' : 'access_denied'),
      'user.name': auth.user.username,
      ...(by.apiKey
        ? { 'apikey.id': by.apiKey.id, ...(by.apiKey.name !== null ? { 'apikey.name': by.apiKey.name } : {}) }
        : { 'user.realm': auth.lookupRealm.name, 'user.run_by.name': by.user.username, 'user.run_by.realm': auth.authenticationRealm.name }),
      'user.roles': effectiveRoles(auth.permission), // ES: the user's resolved roles
      'authentication.type': auth.authenticationType.toUpperCase(),
      ...this.tail(req, requestId, e),
    });
  }

  private head(action: string): Record<string, unknown> {
    return { type: 'audit', '@timestamp': new Date(this.opts.now?.() ?? Date.now()).toISOString(), 'node.id': this.opts.nodeId, 'event.type': 'transport', 'event.action': action };
  }

  private tail(req: EsRequest, requestId: string, e: { action: string; indices?: string[] }): Record<string, unknown> {
    return {
      'origin.type': 'rest',
      'url.path': req.path,
      'request.method': req.method,
      'request.id': requestId,
      action: e.action,
      ...(e.indices ? { indices: e.indices } : {}),
      ...(req.opaqueId !== undefined ? { opaque_id: req.opaqueId } : {}),
    };
  }

  private write(line: Record<string, unknown>): void {
    this.stream().write(`${JSON.stringify(line)}\n`);
  }

  private stream(): WriteStream {
    if (!this.out) {
      mkdirSync(join(this.opts.dataDir, 'logs'), { recursive: true });
      this.out = createWriteStream(this.path, { flags: 'a', mode: 0o600 });
      this.out.on('error', () => undefined); // a full disk must not take the node down with it
    }
    return this.out;
  }

  /** Flushes and closes the file (node stop). */
  close(): Promise<void> {
    const out = this.out;
    this.out = undefined;
    return out ? new Promise((r) => out.end(r)) : Promise.resolve();
  }
}
