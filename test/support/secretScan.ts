import type { NatsConnection } from '@nats-io/transport-node';
import { readStream, EVENT_STREAM } from '../../streams';

/** What credential secret material looks like in a fact: hash formats and the fields that carried it. */
const HASHES = /\{PBKDF2(_STRETCH)?\}|\{SSHA256\}|\{SHA\}|\{MD5\}|\$2[aby]?\$\d\d\$/;
const FIELDS = /"(passwordHash|accessHash|refreshHash|hash|superseding|password|api_key|secret)"\s*:/;

/**
 * Every fact `nc` (a subscriber) can read from ES_EVT, and what in it looks like secret material:
 * a hash format, a field that held one, or any of `secrets` (passwords, key and token values, token
 * hashes) as a substring.
 */
export async function scanFacts(nc: NatsConnection, secrets: string[] = []): Promise<{ types: string[]; found: string[]; texts: string[] }> {
  const dec = new TextDecoder();
  const types: string[] = [];
  const found: string[] = [];
  const texts: string[] = [];
  for await (const m of readStream(nc, EVENT_STREAM)) {
    const text = dec.decode(m.data);
    texts.push(text);
    types.push((JSON.parse(text) as { type: string }).type);
    const h = HASHES.exec(text) ?? FIELDS.exec(text);
    if (h) found.push(`#${m.seq} ${m.subject}: ${h[0]}`);
    for (const s of secrets) if (s && text.includes(s)) found.push(`#${m.seq} ${m.subject}: a secret`);
  }
  return { types, found, texts };
}
