/**
 * Framing for batches of documents that carry raw `_source` text: one JSON header line per item,
 * followed by the source text itself when the header says `len` (its length in UTF-16 units).
 * Sources are never escaped into a JSON string, parsed or re-serialized on the way.
 *
 *   {"op":"index","id":"1","seqNo":0,"version":1,"len":17}\n{"title":"hello"}\n
 */
export interface Framed {
  len?: number;
}

export function encodeBatch<T extends object>(items: T[], sourceOf: (t: T) => string | undefined): string {
  const parts: string[] = [];
  for (const it of items) {
    const src = sourceOf(it);
    if (src === undefined) {
      parts.push(JSON.stringify(it), '\n');
    } else {
      const { source: _drop, ...head } = it as T & { source?: string };
      parts.push(JSON.stringify({ ...head, len: src.length }), '\n', src, '\n');
    }
  }
  return parts.join('');
}

/** Inverse of encodeBatch; the `source` property is restored from the frame. */
export function decodeBatch<T extends object>(text: string): Array<T & { source?: string }> {
  const out: Array<T & { source?: string }> = [];
  let pos = 0;
  while (pos < text.length) {
    const nl = text.indexOf('\n', pos);
    if (nl < 0) break;
    const head = JSON.parse(text.slice(pos, nl)) as T & Framed & { source?: string };
    pos = nl + 1;
    if (head.len !== undefined) {
      head.source = text.slice(pos, pos + head.len);
      pos += head.len + 1;
      delete head.len;
    }
    out.push(head);
  }
  return out;
}
