/**
 * Limits a document must respect before it is indexed (docParser.ts): Jackson's nesting depth and
 * Lucene's longest term. Both fail as ES's 400s, before the store or the mapping change.
 */
import { EsError } from '../../../wire/esErrors';
import { JsonDepthError, MAX_NESTING_DEPTH, nestingOverflow } from '../../../wire/json';
import { mapperParsing, type FieldDef } from './fieldDef';

/** Lucene's `IndexWriter.MAX_TERM_LENGTH`: the longest term, in UTF-8 bytes. */
export const MAX_TERM_BYTES = 32766;

/** A document deeper than the JSON parser allows (ES: Jackson's nesting limit while parsing it). */
export function checkNesting(raw: string): void {
  const at = nestingOverflow(raw, MAX_NESTING_DEPTH);
  if (at < 0) return;
  const e = new JsonDepthError(MAX_NESTING_DEPTH + 1, MAX_NESTING_DEPTH, at);
  const [line, col] = lineCol(raw, at);
  throw mapperParsing('failed to parse', new EsError('x_content_parse_exception', 400, `[${line}:${col}] ${e.message}`, { meta: { line, col } }));
}

function lineCol(text: string, pos: number): [number, number] {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < pos; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return [line, pos - start + 1];
}

/** Lucene refuses a term over 32,766 UTF-8 bytes; ES reports its message (IndexingChain). */
export function checkTermLength(def: FieldDef, s: string): void {
  const bytes = Buffer.from(s, 'utf8');
  if (bytes.length <= MAX_TERM_BYTES) return;
  const prefix = [...bytes.subarray(0, 30)].map((b) => (b > 127 ? b - 256 : b)).join(', ');
  const original = `bytes can be at most ${MAX_TERM_BYTES} in length; got ${bytes.length}`;
  throw new EsError(
    'illegal_argument_exception',
    400,
    `Document contains at least one immense term in field="${def.path}" (whose UTF8 encoding is longer than the max length ${MAX_TERM_BYTES}), ` +
      `all of which were skipped.  Please correct the analyzer to not produce such terms.  The prefix of the first immense term is: '[${prefix}]...', original message: ${original}`,
    { causedBy: new EsError('max_bytes_length_exceeded_exception', 400, original) },
  );
}
