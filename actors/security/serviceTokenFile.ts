import { readFile } from 'node:fs/promises';
import { unwatchFile, watchFile } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../checksummedFile';
import { parseNameHashFile } from './nameHashFile';

/**
 * Service account tokens: ES's wire encoding and the node-local `<configDir>/service_tokens` file
 * (lines `elastic/fleet-server/<name>:<hash>`), shared by the node and `scripts/serviceTokens.ts`.
 */

const MAGIC = Buffer.from([0, 1, 0, 1]);

/** ES ServiceAccountToken's name rule and message. */
export const VALID_TOKEN_NAME = /^[a-zA-Z0-9-][a-zA-Z0-9_-]{0,255}$/;
export const INVALID_TOKEN_NAME_MESSAGE =
  'service account token name must have at least 1 character and at most 256 characters that are alphanumeric (A-Z, a-z, 0-9) or hyphen (-) or underscore (_). It must not begin with an underscore (_).';

/** A parsed bearer value: `<ns>/<svc>/<name>:<secret>` behind the magic bytes. */
export interface ServiceTokenParts {
  namespace: string;
  service: string;
  name: string;
  secret: string;
}

/** Std base64 without padding of `00 01 00 01` + `ns/svc/name:secret` (starts `AAEAAWVsYXN0aWMv` for elastic). */
export function encodeServiceToken(p: ServiceTokenParts): string {
  return Buffer.concat([MAGIC, Buffer.from(`${p.namespace}/${p.service}/${p.name}:${p.secret}`, 'utf8')])
    .toString('base64')
    .replace(/=+$/, '');
}

/**
 * Decodes a bearer value. `undefined` when it is not a service token at all (no magic bytes); `null`
 * when it has the magic bytes but cannot be parsed (ES passes both to the next authenticator).
 */
export function decodeServiceToken(bearer: string): ServiceTokenParts | undefined | null {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(bearer) || !bearer.startsWith('AAEAA')) return undefined;
  const bytes = Buffer.from(bearer, 'base64');
  if (bytes.length < 5 || !bytes.subarray(0, 4).equals(MAGIC)) return undefined;
  const text = bytes.subarray(4).toString('utf8');
  const colon = text.indexOf(':');
  if (colon < 0) return null;
  const parts = text.slice(0, colon).split('/');
  if (parts.length !== 3 || parts.some((x) => !x)) return null;
  return { namespace: parts[0], service: parts[1], name: parts[2], secret: text.slice(colon + 1) };
}

export const serviceTokensPath = (configDir: string) => join(configDir, 'service_tokens');

/** Reads the file (empty when missing). */
export async function readServiceTokens(configDir: string): Promise<Map<string, string>> {
  try {
    return parseNameHashFile(await readFile(serviceTokensPath(configDir), 'utf8'));
  } catch {
    return new Map();
  }
}

/** Writes the file atomically (temp file, fsync, rename; mode 0660), sorted by name. */
export async function writeServiceTokens(configDir: string, tokens: Map<string, string>): Promise<void> {
  const path = serviceTokensPath(configDir);
  const text = [...tokens.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}:${v}\n`)
    .join('');
  writeFileAtomic(path, text, 0o660);
}

/**
 * The node's view of the file: reloaded when its mtime changes (a cheap stat poll, so tokens added
 * by the CLI are picked up without a restart).
 */
export class FileServiceTokens {
  tokens = new Map<string, string>();
  private listener?: () => void;

  constructor(
    private readonly configDir: string,
    private readonly onReload: () => void = () => {},
    private readonly pollMs = 1_000,
  ) {}

  async start(): Promise<void> {
    await this.reload();
    this.listener = () => void this.reload();
    watchFile(serviceTokensPath(this.configDir), { interval: this.pollMs, persistent: false }, this.listener);
  }

  async reload(): Promise<void> {
    this.tokens = await readServiceTokens(this.configDir);
    this.onReload();
  }

  /** Token names of one account (`elastic/fleet-server`). */
  namesOf(account: string): string[] {
    return [...this.tokens.keys()].filter((k) => k.startsWith(`${account}/`)).map((k) => k.slice(account.length + 1));
  }

  stop(): void {
    if (this.listener) unwatchFile(serviceTokensPath(this.configDir), this.listener);
  }
}
