/**
 * IP literals as InetAddresses.forString reads them (strict IPv4 dotted quads, IPv6 with `::` and
 * an embedded IPv4 tail), as 16 bytes (IPv4 mapped into IPv6), and their byte order: what `ip`
 * fields store and sort by (index/fieldCodecs.ts) and what the coordinator merges ip sorts by.
 */

/** InetAddresses.forString: a strict IPv4 or IPv6 literal as 16 bytes (IPv4 mapped), or null. */
export function parseIp(s: string): Uint8Array | null {
  if (s.includes(':')) return parseIp6(s);
  const v4 = parseIp4(s);
  if (!v4) return null;
  const out = new Uint8Array(16);
  out[10] = out[11] = 0xff;
  out.set(v4, 12);
  return out;
}

function parseIp4(s: string): Uint8Array | null {
  const parts = s.split('.');
  if (parts.length !== 4) return null;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i];
    // leading zeroes are refused (decimal or octal is ambiguous)
    if (!/^\d{1,3}$/.test(p) || (p.length > 1 && p[0] === '0')) return null;
    const n = Number(p);
    if (n > 255) return null;
    out[i] = n;
  }
  return out;
}

function parseIp6(s: string): Uint8Array | null {
  let text = s;
  let tail: Uint8Array | null = null;
  const lastColon = text.lastIndexOf(':');
  if (text.slice(lastColon + 1).includes('.')) {
    tail = parseIp4(text.slice(lastColon + 1));
    if (!tail) return null;
    text = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const dbl = text.indexOf('::');
  if (dbl >= 0 && text.indexOf('::', dbl + 1) >= 0) return null;
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const head = dbl >= 0 ? groups(text.slice(0, dbl)) : groups(text);
  const rest = dbl >= 0 ? groups(text.slice(dbl + 2)) : [];
  const fill = 8 - head.length - rest.length;
  if (dbl >= 0 ? fill < 1 : fill !== 0) return null;
  const all = [...head, ...Array<string>(dbl >= 0 ? fill : 0).fill('0'), ...rest];
  const out = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(all[i])) return null;
    const n = parseInt(all[i], 16);
    out[2 * i] = n >> 8;
    out[2 * i + 1] = n & 0xff;
  }
  if (tail) out.set(tail, 12);
  return out;
}

/** Compares two IP literals by their bytes (undefined when either is not one). */
export function compareIps(a: string, b: string): number | undefined {
  const x = parseIp(a), y = parseIp(b);
  if (!x || !y) return undefined;
  for (let i = 0; i < 16; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return 0;
}
