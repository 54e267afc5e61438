/**
 * Framing for batches of documents that carry raw `_source` text (shard write requests and the
 * document log): the items' other fields as one JSON array, the source lengths (UTF-16 units, -1
 * for none) as another, then the sources themselves, back to back. Sources are never escaped into
 * a JSON string, parsed or re-serialized on the way; the heads cost one stringify and one parse
 * per batch instead of one per item.
 *
 *   [[{"op":"index","id":"1","seqNo":0,"version":1},{"op":"delete","id":"2",…}],[17,-1]]\n{"title":"hello"}
 *
 * Batches written before this format (one JSON header line per item, then the source and a
 * newline when the header says `len`) are still read: the document log keeps them.
 *
 *   {"op":"index","id":"1","seqNo":0,"version":1,"len":17}\n{"title":"hello"}\n
 */
export interface Framed {
  len?: number;
}

export function encodeBatch<T extends object>(items: T[], sourceOf: (t: T) => string | undefined): string {
  if (!items.length) return '';
  const heads = new Array<object>(items.length);
  const lens = new Array<number>(items.length);
  const sources: string[] = [];
  for (let i = 0; i < items.length; i++) {
    const it = items[i];
    const src = sourceOf(it);
    if (src === undefined) {
      heads[i] = it;
      lens[i] = -1;
    } else {
      const { source: _drop, ...head } = it as T & { source?: string };
      heads[i] = head;
      lens[i] = src.length;
      sources.push(src);
    }
  }
  return `[${JSON.stringify(heads)},${JSON.stringify(lens)}]\n${sources.join('')}`;
}

/** Inverse of encodeBatch (either format); the `source` property is restored from the frame. */
export function decodeBatch<T extends object>(text: string): Array<T & { source?: string }> {
  if (text.charCodeAt(0) !== 0x5b /* [ */) return decodeLines<T>(text);
  const nl = text.indexOf('\n');
  const [heads, lens] = JSON.parse(nl < 0 ? text : text.slice(0, nl)) as [Array<T & { source?: string }>, number[]];
  let pos = nl + 1;
  for (let i = 0; i < heads.length; i++) {
    const len = lens[i];
    if (len < 0) continue;
    heads[i].source = text.slice(pos, pos + len);
    pos += len;
  }
  return heads;
}

/** The line format of older batches. */
function decodeLines<T extends object>(text: string): Array<T & { source?: string }> {
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
