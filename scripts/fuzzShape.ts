/**
 * Whether an answer is one Elasticsearch gives (the fuzz's shape check): a 4xx carries ES's error
 * body (`{"error": {"type", "reason", ...}, "status"}`, or the string `error` ES writes for an unknown
 * route or a wrong method, or the OAuth2 `error`/`error_description` of the token API), or one of the few non-error 4xx bodies ES has (a missing document's
 * `found: false`, a delete's `result: not_found`, a clear of freed contexts, an empty object for a
 * missing security entity, a token invalidation that found nothing, a health wait that timed out). HEAD answers carry no body.
 */
export function esShaped4xx(method: string, status: number, body: string): boolean {
  if (method === 'HEAD') return body === '';
  if (status === 413 && body === '') return true; // as ES's HTTP layer answers an oversized body
  let j: unknown;
  try {
    j = JSON.parse(body);
  } catch {
    return false;
  }
  if (!j || typeof j !== 'object' || Array.isArray(j)) return false;
  const o = j as Record<string, unknown>;
  const e = o.error;
  if (e && typeof e === 'object') {
    const x = e as Record<string, unknown>;
    return typeof x.type === 'string' && typeof x.reason === 'string' && o.status === status;
  }
  if (typeof e === 'string') return o.status === status || typeof o.error_description === 'string'; // the token API's OAuth2 errors (RFC 6749 5.2), as ES writes them
  if (status === 404) return o.found === false || o.result === 'not_found' || 'succeeded' in o || 'invalidated_tokens' in o || Object.keys(o).length === 0;
  if (status === 408) return o.timed_out === true;
  return false;
}

/** The first answer of a raw HTTP exchange: status, and body (content-length or chunked), or undefined when incomplete. */
export function firstAnswer(raw: string): { status: number; body: string } | undefined {
  const head = raw.indexOf('\r\n\r\n');
  if (head < 0) return undefined;
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(raw);
  if (!m) return undefined;
  const headers = raw.slice(0, head).toLowerCase();
  const rest = raw.slice(head + 4);
  const len = /\r\ncontent-length: *(\d+)/.exec(headers);
  if (len) return rest.length >= Number(len[1]) ? { status: Number(m[1]), body: rest.slice(0, Number(len[1])) } : undefined;
  if (/\r\ntransfer-encoding: *chunked/.test(headers)) {
    let body = '';
    let at = 0;
    for (;;) {
      const eol = rest.indexOf('\r\n', at);
      if (eol < 0) return undefined;
      const size = parseInt(rest.slice(at, eol), 16);
      if (Number.isNaN(size)) return { status: Number(m[1]), body };
      if (size === 0) return { status: Number(m[1]), body };
      if (rest.length < eol + 2 + size) return undefined;
      body += rest.slice(eol + 2, eol + 2 + size);
      at = eol + 4 + size;
    }
  }
  return { status: Number(m[1]), body: '' };
}
