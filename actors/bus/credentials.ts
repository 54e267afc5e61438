import { chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { writeFileAtomic } from '../checksummedFile';
import { join } from 'node:path';
import { nkeys } from '@nats-io/nats-core';
import type { BusRole, KeyRole } from '../../streams/busPermissions';

/**
 * The NATS users of a node's own nats-server (or of `npm run cluster`), one nkey per role
 * (README "Security model of the bus"): `<dir>/<role>.nk` holds the seed (mode 0600, in a 0700
 * folder), as the NATS tools' nkey files do. Generated once, kept across restarts.
 *
 * Why nkeys rather than passwords: the server config holds public keys only, the seed never
 * crosses the wire (the server sends a nonce, the client signs it), and checking a signature costs
 * microseconds where a bcrypt password costs the server tens of milliseconds per connect.
 */
export interface RoleKey {
  role: KeyRole;
  /** The user's public key (`U…`), what the server config names. */
  publicKey: string;
  /** The seed (`SU…`): the secret. */
  seed: string;
  /** The file holding the seed. */
  file: string;
}

const dec = new TextDecoder();
const enc = new TextEncoder();

/** The seed file of a role under `dir`. */
export const seedFile = (dir: string, role: KeyRole) => join(dir, `${role}.nk`);

/** Reads a seed file (`SU…`, surrounding blanks ignored); throws with the file's name when it is not one. */
export function readSeedFile(file: string): string {
  const seed = readFileSync(file, 'utf8').trim();
  try {
    nkeys.fromSeed(enc.encode(seed));
  } catch {
    throw new Error(`${file} does not hold an nkey seed`);
  }
  return seed;
}

/** The public key of a seed. */
export const publicKeyOf = (seed: string): string => nkeys.fromSeed(enc.encode(seed)).getPublicKey();

/** The key of `role` under `dir`, generated on first use. */
export function ensureRoleKey(dir: string, role: KeyRole): RoleKey {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const file = seedFile(dir, role);
  if (!existsSync(file)) {
    const kp = nkeys.createUser();
    writeFileAtomic(file, dec.decode(kp.getSeed()) + '\n', 0o600); // a torn seed file would lock the node out
  }
  const seed = readSeedFile(file);
  return { role, seed, publicKey: publicKeyOf(seed), file };
}

/** Both roles' keys under `dir`. */
export function ensureBusKeys(dir: string): Record<BusRole, RoleKey> {
  return { node: ensureRoleKey(dir, 'node'), subscriber: ensureRoleKey(dir, 'subscriber') };
}
