/**
 * Seeded documents of the segments scale run (scripts/segmentsScale.ts) and of its crash tests:
 * document `i` at version `v` is a pure function of (seed, i, v), so a checker regenerates what
 * was sent instead of keeping gigabytes of it. Sources are JSON texts written by hand (not
 * `JSON.stringify`) with what a re-serialization would change: `\"`, `\\`, `\n` and `\u00e9`
 * escapes next to literal UTF-8 (é, 東京, an astral emoji), a float `12.50`, a space after one
 * colon. A byte-identical read-back therefore proves the stored `_source` is the sent text.
 *
 * About 1 doc in 7 has the word `zebra` (or `Zebra`) in `body`; no other word analyzes to it, so
 * a `match` on it counts exactly {@link hasZebra} docs.
 */
import { rng } from '../../test/support/rng';

const WORDS = (
  'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo ' +
  'sierra tango uniform victor whiskey xray yankee amber cobalt copper silver marble granite basalt quartz ' +
  'river meadow forest canyon harbor island valley summit glacier desert prairie tundra lagoon delta9 ' +
  'café naïve façade über smörgåsbord 東京 北京 ソウル'
).split(' ');
const NOTES = [
  'line\\nbreak \\"quoted\\" back\\\\slash',
  'caf\\u00e9 and café, 東京 and \\u6771\\u4eac',
  'emoji 🙂 and \\ud83d\\ude42, tab\\tend',
  'plain note',
];

/** A mixing hash of the doc's coordinates: the PRNG seed of one doc version. */
function docSeed(seed: number, i: number, v: number): number {
  let h = Math.imul(seed ^ 0x9e3779b1, 0x85ebca77) ^ Math.imul(i + 1, 0xc2b2ae3d) ^ Math.imul(v + 7, 0x27d4eb2f);
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}


export interface ScaleDocs {
  readonly seed: number;
  /** Approximate UTF-8 bytes of a source. */
  readonly docBytes: number;
  /** `_id` of doc `i`. */
  id(i: number): string;
  /** Doc number of an `_id` (-1 when it is not one of ours). */
  num(id: string): number;
  /** Source of doc `i` at version `v` (0: the first write). */
  source(i: number, v?: number): string;
  /** Whether doc `i` at version `v` has `zebra` in `body`. */
  hasZebra(i: number, v?: number): boolean;
}

export function scaleDocs(seed: number, docBytes = 1024): ScaleDocs {
  const zebra = (i: number, v: number) => docSeed(seed, i, v) % 7 === 0;
  return {
    seed,
    docBytes,
    id: (i) => `d${i}`,
    num: (id) => (/^d\d+$/.test(id) ? Number(id.slice(1)) : -1),
    hasZebra: (i, v = 0) => zebra(i, v),
    source(i, v = 0) {
      const s = docSeed(seed, i, v);
      const r = rng(s);
      const pick = () => WORDS[Math.floor(r() * WORDS.length)];
      const title = `${pick()} ${pick()} ${pick()}`;
      const head = `{"i":${i},"v":${v},"tag":"t${s % 97}","f":${s % 1000}.50,"title":"${title}","note":"${NOTES[s % NOTES.length]}",${s % 5 === 0 ? '"body": "' : '"body":"'}`;
      // body fills the doc to about docBytes (UTF-8; the non-ASCII words are rare enough)
      const room = Math.max(8, docBytes - head.length - 2);
      const words: string[] = [];
      let len = 0;
      while (len < room) {
        const w = pick();
        words.push(w);
        len += w.length + 1;
      }
      if (zebra(i, v)) words[Math.floor(r() * words.length)] = s & 8 ? 'Zebra' : 'zebra';
      return `${head}${words.join(' ')}"}`;
    },
  };
}

/**
 * The raw `_source` texts of a search or scroll response, in hit order, cut out of the response
 * bytes (a JSON.parse would lose escapes, number forms and spacing). Relies on the documents of
 * {@link scaleDocs} never containing the text `"_source":` themselves.
 */
export function rawSources(body: string): string[] {
  const out: string[] = [];
  const key = '"_source":';
  for (let at = body.indexOf(key); at >= 0; at = body.indexOf(key, at)) {
    const start = at + key.length;
    const end = valueEnd(body, start);
    out.push(body.slice(start, end));
    at = end;
  }
  return out;
}

/** Index just past the JSON object or array starting at `start`. */
function valueEnd(s: string, start: number): number {
  let depth = 0;
  for (let i = start; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x22) {
      // a string: skip to its closing quote
      for (i++; i < s.length; i++) {
        const d = s.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (--depth === 0) return i + 1;
    }
  }
  throw new Error(`unterminated _source at ${start}`);
}
