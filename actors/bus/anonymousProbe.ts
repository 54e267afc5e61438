import { connect } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import { connectionOptions, type BusConnection } from '../../streams/busConnection';

/**
 * Whether the servers of `c` let a client in without credentials (same servers and CA, nothing
 * else). Resolves false when no server answers in `timeoutMs`.
 */
export async function admitsAnonymous(c: BusConnection, timeoutMs = 2_000): Promise<boolean> {
  const { servers, tls } = connectionOptions({ servers: c.servers, ...(c.tls?.ca ? { tls: { ca: c.tls.ca } } : {}) });
  try {
    const nc = await connect({ servers, ...(tls ? { tls } : {}), timeout: timeoutMs, reconnect: false, maxReconnectAttempts: 0, name: 'es-anonymous-probe' });
    await nc.close();
    return true;
  } catch {
    return false;
  }
}

/** The start-up warning of a node on a NATS that lets anonymous clients in (README "Security model of the bus"). */
export const ANONYMOUS_WARNING =
  'the NATS servers let clients in without credentials: anyone who reaches their port can read every document (ES_DATA), read and forge lifecycle facts and credentials (a forged password fact logs in as elastic), purge the streams and send commands to scroll and PIT contexts; give NATS users and TLS (README "Security model of the bus") and set nats.user/nats.password, nats.nkey_seed_file or nats.creds_file';

/** Logs {@link ANONYMOUS_WARNING} when the servers admit anonymous clients (checked in the background). */
export async function warnIfAnonymous(c: BusConnection, log: Logger): Promise<boolean> {
  const open = await admitsAnonymous(c);
  if (open) log.warn({ servers: c.servers }, ANONYMOUS_WARNING);
  return open;
}
