import {
  connect,
  credsAuthenticator,
  nkeyAuthenticator,
  type Authenticator,
  type ConnectionOptions,
  type NatsConnection,
} from '@nats-io/transport-node';

/**
 * How to reach and log into a NATS system, as plain data (it crosses worker boundaries and is what
 * `npm run events -- credentials --json` prints). Secrets are values here, read from their files by
 * whoever built it; at most one of user/pass, token, nkey seed or creds.
 */
export interface BusConnection {
  servers: string[];
  user?: string;
  pass?: string;
  token?: string;
  /** An nkey user seed (`SU…`). */
  nkeySeed?: string;
  /** A `.creds` file's text (user JWT + seed, for an operator-mode NATS). */
  creds?: string;
  /** PEM texts: the CA to trust, and a client certificate and key (when the server verifies clients). */
  tls?: { ca?: string; cert?: string; key?: string };
  /** Inbox prefix (a subscriber must use its role's: streams/busPermissions.ts). */
  inboxPrefix?: string;
}

const enc = new TextEncoder();

/** The nats.js authenticator of a connection's credentials, or undefined for an anonymous one. */
export function authenticatorOf(c: BusConnection): Authenticator | undefined {
  if (c.nkeySeed) return nkeyAuthenticator(enc.encode(c.nkeySeed.trim()));
  if (c.creds) return credsAuthenticator(enc.encode(c.creds));
  return undefined;
}

/** Whether the connection carries any credential. */
export const hasCredentials = (c: BusConnection): boolean => !!(c.user || c.token || c.nkeySeed || c.creds);

/** nats.js options for a connection (merge with the caller's own: name, reconnects). */
export function connectionOptions(c: BusConnection): ConnectionOptions {
  const auth = authenticatorOf(c);
  return {
    servers: c.servers,
    ...(c.user ? { user: c.user, pass: c.pass ?? '' } : {}),
    ...(c.token ? { token: c.token } : {}),
    ...(auth ? { authenticator: auth } : {}),
    ...(c.tls ? { tls: { ...(c.tls.ca ? { ca: c.tls.ca } : {}), ...(c.tls.cert ? { cert: c.tls.cert } : {}), ...(c.tls.key ? { key: c.tls.key } : {}) } } : {}),
    ...(c.inboxPrefix ? { inboxPrefix: c.inboxPrefix } : {}),
  };
}

/** Connects with a connection's servers, credentials and TLS, plus `extra` options. */
export function connectBus(c: BusConnection, extra: Partial<ConnectionOptions> = {}): Promise<NatsConnection> {
  return connect({ ...connectionOptions(c), ...extra });
}

/**
 * The CONNECT fields of the credentials for a server `nonce` (the replay reader's raw protocol
 * client, scripts/cli/natsWire.ts, sends them itself).
 */
export function connectFields(c: BusConnection, nonce: string | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (c.user) Object.assign(out, { user: c.user, pass: c.pass ?? '' });
  if (c.token) out.auth_token = c.token;
  const auth = authenticatorOf(c);
  if (auth) Object.assign(out, auth(nonce));
  return out;
}

/** Splits a NATS_URL (`npm run cluster` prints one listing every server, comma-separated). */
export const serverList = (url: string): string[] => url.split(',').map((u) => u.trim()).filter(Boolean);
