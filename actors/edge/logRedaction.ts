/**
 * Log hygiene of the edge: scroll ids, PIT ids and credentials never reach a log line in clear
 * (lifecycle facts already carry context uuids only). A path-form scroll id
 * (`/_search/scroll/<id>`), a context id (`/_contexts/<id>`) and id- or secret-bearing query
 * parameters are replaced by `<redacted>`, and so is any copy of them inside an error's text.
 */

const REDACTED = '<redacted>';

/** Query parameters whose values may hold a scroll/PIT id or a credential (`source` = a whole body). */
const SECRET_PARAMS = new Set(['scroll_id', 'id', 'pit', 'source', 'token', 'access_token', 'refresh_token', 'api_key', 'password']);

/** Path segments after which the next segment is an opaque id. */
const ID_AFTER: Array<[string, string]> = [['_search', 'scroll'], ['', '_contexts']];

/** The request's secrets: raw path ids and sensitive query values (as sent and as decoded). */
export function secretsOf(uri: string): string[] {
  const out = new Set<string>();
  const q = uri.indexOf('?');
  const segs = (q < 0 ? uri : uri.slice(0, q)).split('/');
  segs.forEach((s, i) => {
    if (i > 0 && isIdSegment(segs, i) && s) {
      out.add(s);
      out.add(safeDecode(s));
      for (const part of safeDecode(s).split(',')) if (part) out.add(part);
    }
  });
  if (q >= 0) {
    for (const pair of uri.slice(q + 1).split('&')) {
      const eq = pair.indexOf('=');
      if (eq < 0) continue;
      const key = safeDecode(pair.slice(0, eq)).toLowerCase();
      const raw = pair.slice(eq + 1);
      if (SECRET_PARAMS.has(key) && raw) {
        out.add(raw);
        out.add(safeDecode(raw.replace(/\+/g, ' ')));
      }
    }
  }
  // longest first, so a shorter secret inside a longer one does not leave the rest behind
  return [...out].filter((s) => s.length >= 4).sort((a, b) => b.length - a.length);
}

function isIdSegment(segs: string[], i: number): boolean {
  return ID_AFTER.some(([a, b]) => segs[i - 1] === b && (a === '' || segs[i - 2] === a));
}

/** `uri` with path-form ids and sensitive query values replaced. */
export function redactUri(uri: string): string {
  const q = uri.indexOf('?');
  const segs = (q < 0 ? uri : uri.slice(0, q)).split('/');
  const path = segs.map((s, i) => (i > 0 && s && isIdSegment(segs, i) ? REDACTED : s)).join('/');
  if (q < 0) return path;
  const query = uri
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      return eq >= 0 && SECRET_PARAMS.has(safeDecode(pair.slice(0, eq)).toLowerCase()) ? `${pair.slice(0, eq)}=${REDACTED}` : pair;
    })
    .join('&');
  return `${path}?${query}`;
}

/** `text` with every secret replaced. */
export function scrub(text: string, secrets: string[]): string {
  let out = text;
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
  return out;
}

/** A loggable copy of an error (message and stack scrubbed). */
export function redactError(e: unknown, secrets: string[]): { type: string; message: string; stack?: string } {
  if (e instanceof Error) {
    return { type: e.name, message: scrub(e.message, secrets), ...(e.stack ? { stack: scrub(e.stack, secrets) } : {}) };
  }
  return { type: typeof e, message: scrub(String(e), secrets) };
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
