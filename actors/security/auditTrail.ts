import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import type { EsRequest } from '../wire/rest';
import type { Authentication } from '../wire/security';

/**
 * The security audit log, for run-as only (ES LoggingAuditTrail.runAsGranted / runAsDenied, the
 * `logfile` output): with `xpack.security.audit.enabled: true` every request that sends
 * `es-security-runas-user` appends one JSON line to `<data dir>/logs/<cluster.name>_audit.json`,
 * with ES's field names: `user.name`/`user.realm` for who authenticated, `user.run_as.name`/
 * `user.run_as.realm` for the user run as (no realm when there is no such user), `user.roles` (the
 * authenticating user's), `action`, `indices`, `request.id`, `opaque_id`. No credential, header
 * value other than these names, or request body is written. The other audit events (access,
 * authentication, security config changes) are not audited.
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

  /** One `run_as_granted` / `run_as_denied` line for a run-as authentication (`auth.runAs` set). */
  runAs(auth: Authentication, req: EsRequest, e: RunAsAuditEvent): void {
    if (!this.opts.enabled || !auth.runAs) return;
    const by = auth.runAs;
    const line: Record<string, unknown> = {
      type: 'audit',
      '@timestamp': new Date(this.opts.now?.() ?? Date.now()).toISOString(),
      'node.id': this.opts.nodeId,
      'event.type': 'transport',
      'event.action': e.granted ? 'run_as_granted' : 'run_as_denied',
      'user.name': by.user.username,
      'user.realm': auth.authenticationRealm.name,
      'user.run_as.name': auth.user.username,
      ...(e.lookupRealm !== undefined ? { 'user.run_as.realm': e.lookupRealm } : {}),
      'user.roles': by.apiKey ? [] : by.user.roles,
      ...(by.apiKey ? { 'apikey.id': by.apiKey.id, ...(by.apiKey.name !== null ? { 'apikey.name': by.apiKey.name } : {}) } : {}),
      'origin.type': 'rest',
      'url.path': req.path,
      'request.method': req.method,
      'request.id': randomBytes(16).toString('base64url'),
      action: e.action,
      ...(e.indices ? { indices: e.indices } : {}),
      ...(req.opaqueId !== undefined ? { opaque_id: req.opaqueId } : {}),
    };
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
