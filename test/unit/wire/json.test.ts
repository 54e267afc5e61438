import { EsError } from '../../../actors/wire/esErrors';
import { nestingOverflow, parseBody, parseJson, MAX_NESTING_DEPTH } from '../../../actors/wire/json';

const deep = (n: number) => `${'{"a":'.repeat(n - 1)}[1]${'}'.repeat(n - 1)}`;

function bodyError(text: string): EsError {
  try {
    parseBody(text);
  } catch (e) {
    return e as EsError;
  }
  throw new Error('parsed');
}

describe('JSON nesting bound', () => {
  it('parses request bodies up to 1,000 levels and refuses deeper ones with ES’s 400', () => {
    expect(parseBody(deep(MAX_NESTING_DEPTH))).toBeDefined();
    const e = bodyError(deep(MAX_NESTING_DEPTH + 1));
    expect([e.type, e.status, e.message]).toEqual([
      'x_content_parse_exception',
      400,
      '[1:5001] Document nesting depth (1001) exceeds the maximum allowed (1000, from `StreamReadConstraints.getMaxNestingDepth()`)',
    ]);
  });

  it('bounds the lossless (64-bit) parser too, which recurses', () => {
    const text = `${'['.repeat(200_000)}12345678901234567890${']'.repeat(200_000)}`;
    expect(bodyError(text).type).toBe('x_content_parse_exception');
    expect(() => parseJson(text)).toThrow(/Document nesting depth/);
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    const inString = JSON.stringify({ s: '['.repeat(5000), t: '\\"{{{{' + '{'.repeat(3000), u: '\\\\' });
    expect(nestingOverflow(inString, 2)).toBe(-1);
    expect(parseBody<{ s: string }>(inString).s).toHaveLength(5000);
    expect(nestingOverflow('{"a\\"":[[[' + ' '.repeat(10), 3)).toBe(9);
  });
});
