// Talks to the node. The Authorization header lives in this module's memory only (never in storage,
// a cookie or a URL). `credentials: 'omit'` keeps the browser out of it: no cookies, no cached HTTP
// auth, and no native login prompt when a 401 carries a Basic challenge.

let authorization = null;

/** Thrown for any non-2xx answer; `reason` is ES's error reason when the body has one. */
export class ApiError extends Error {
  constructor(status, body) {
    super(reasonOf(status, body));
    this.status = status;
    this.body = body;
  }
}

function reasonOf(status, body) {
  if (body && typeof body === 'object') {
    if (typeof body.error === 'string') return body.error;
    if (body.error && typeof body.error.reason === 'string') return body.error.reason;
    if (typeof body.error_description === 'string') return body.error_description;
  }
  return `HTTP ${status}`;
}

/** Sets the header from the login form's choice. */
export function setCredentials(method, values) {
  if (method === 'password') {
    const bytes = new TextEncoder().encode(`${values.username}:${values.password}`);
    let bin = '';
    for (const b of bytes) bin += String.fromCharCode(b);
    authorization = `Basic ${btoa(bin)}`;
  } else if (method === 'apikey') authorization = `ApiKey ${values.apikey.trim()}`;
  else authorization = `Bearer ${values.bearer.trim()}`;
}

export function forget() {
  authorization = null;
}

export const loggedIn = () => authorization !== null;

const headers = (extra = {}) => ({ ...(authorization ? { authorization } : {}), accept: 'application/json', ...extra });

/** A JSON request; resolves to the parsed body, rejects with {@link ApiError}. */
export async function request(path, { method = 'GET', body, signal } = {}) {
  const res = await fetch(path, {
    method,
    headers: headers(body === undefined ? {} : { 'content-type': 'application/json' }),
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'omit',
    cache: 'no-store',
    signal,
  });
  const text = await res.text();
  let parsed;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!res.ok) throw new ApiError(res.status, parsed);
  return parsed;
}

/** Listeners of "the credentials stopped working" (401 on a later call). */
const expiredListeners = new Set();
export const onExpired = (fn) => expiredListeners.add(fn);
/** {@link request}, but a 401 logs the user out (their key or token was invalidated, or expired). */
export async function call(path, opts) {
  try {
    return await request(path, opts);
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) for (const fn of expiredListeners) fn(e);
    throw e;
  }
}

/**
 * Reads a server-sent-events stream with fetch (EventSource cannot send an Authorization header).
 * Calls `onEvent(event, data)` per event; resolves when the stream ends, rejects on failure.
 */
export async function stream(path, onEvent, signal) {
  const res = await fetch(path, { headers: headers({ accept: 'text/event-stream' }), credentials: 'omit', cache: 'no-store', signal });
  if (!res.ok) {
    let body;
    try {
      body = await res.json();
    } catch {
      body = undefined;
    }
    throw new ApiError(res.status, body);
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let cut;
    while ((cut = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      let event = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        const i = line.indexOf(':');
        const field = i < 0 ? line : line.slice(0, i);
        const val = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
        if (field === 'event') event = val;
        else if (field === 'data') data.push(val);
      }
      if (!data.length) continue;
      let parsed;
      try {
        parsed = JSON.parse(data.join('\n'));
      } catch {
        continue;
      }
      onEvent(event, parsed);
    }
  }
}
