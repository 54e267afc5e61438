import type { IncomingHttpHeaders } from 'node:http';
import { EsError } from '../wire/esErrors';

/**
 * REST API compatibility (`compatible-with=N` in Accept / Content-Type), as ES 8's
 * RestCompatibleVersionHelper checks it: 8 is the current major and 7 the previous one. We also
 * accept 9, which the v9 client sends (a departure from ES 8, which refuses it). Anything else is
 * ES's 400 `media_type_header_exception`, with the precise reason in `caused_by`.
 */
export const CURRENT_MAJOR = 8;
export const MINIMUM_MAJOR = 7;
/** Majors a request may name; 9 is our extension for the official v9 client. */
export const ACCEPTED_MAJORS: ReadonlySet<number> = new Set([7, 8, 9]);

interface Versioned {
  /** The header as ES prints it (`application/vnd.elasticsearch+json; compatible-with=9`). */
  text: string;
  /** The compatible-with value, undefined when the header names none. */
  version?: string;
}

function header(h: IncomingHttpHeaders, name: 'accept' | 'content-type'): Versioned | undefined {
  const raw = h[name];
  const v = Array.isArray(raw) ? raw[0] : raw;
  if (v === undefined || v.trim() === '') return undefined;
  // Clients list several types (`…; compatible-with=8,text/plain`): the first one is what counts.
  const first = v.split(',')[0];
  const [type, ...params] = first.split(';').map((x: string) => x.trim());
  let version: string | undefined;
  const kept: string[] = [];
  for (const p of params) {
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    const key = p.slice(0, eq).trim().toLowerCase();
    const value = p.slice(eq + 1).trim();
    if (key === 'compatible-with') version = value;
    kept.push(`${key}=${value}`);
  }
  return { text: [type.toLowerCase(), ...kept].join('; '), version };
}

const failed = (cause: EsError) =>
  new EsError('media_type_header_exception', 400, 'Invalid media-type value on headers [Accept, Content-Type]', { causedBy: cause });
const status = (reason: string) => new EsError('status_exception', 400, reason);

/** The major a header names (undefined: none named); throws ES's error for a value that is no number. */
function major(h: Versioned | undefined): number | undefined {
  if (h?.version === undefined) return undefined;
  // Byte.parseByte in ES
  if (!/^[-+]?\d+$/.test(h.version)) throw failed(new EsError('number_format_exception', 400, `For input string: "${h.version}"`));
  if (Number(h.version) > 127 || Number(h.version) < -128) {
    throw failed(new EsError('number_format_exception', 400, `Value out of range. Value:"${h.version}" Radix:10`));
  }
  return Number(h.version);
}

/**
 * Throws ES's 400 when the compatibility headers name a version we do not serve, or the two
 * headers disagree on a request with a body. Returns the major asked for (8 when none).
 */
export function checkCompatibility(headers: IncomingHttpHeaders, hasContent: boolean): number {
  const accept = header(headers, 'accept');
  const contentType = header(headers, 'content-type');
  const a = major(accept);
  const c = major(contentType);
  const acceptVersion = a ?? CURRENT_MAJOR;
  const contentVersion = c ?? CURRENT_MAJOR;
  const range = `${CURRENT_MAJOR} or ${MINIMUM_MAJOR}`;
  if (!ACCEPTED_MAJORS.has(acceptVersion)) {
    throw failed(status(`Accept version must be either version ${range}, but found ${acceptVersion}. Accept=${accept?.text ?? 'null'}`));
  }
  if (hasContent) {
    if (!ACCEPTED_MAJORS.has(contentVersion)) {
      throw failed(status(`Content-Type version must be either version ${range}, but found ${contentVersion}. Content-Type=${contentType?.text ?? 'null'}`));
    }
    const both = `Accept=${accept?.text ?? 'null'}, Content-Type=${contentType?.text ?? 'null'}`;
    if (contentVersion !== acceptVersion) {
      throw failed(
        status(
          'A compatible version is required on both Content-Type and Accept headers if either one has requested a compatible version ' +
            `and the compatible versions must match. ${both}`,
        ),
      );
    }
    if ((c === undefined) !== (a === undefined)) {
      throw failed(status(`A compatible version is required on both Content-Type and Accept headers if either one has requested a compatible version. ${both}`));
    }
  }
  return acceptVersion;
}

/** Whether the request carries a body (ES's `hasContent`), judged from its headers. */
export function hasContent(headers: IncomingHttpHeaders): boolean {
  const len = headers['content-length'];
  if (len !== undefined) return Number(len) > 0;
  return headers['transfer-encoding'] !== undefined;
}
