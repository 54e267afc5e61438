import { analyze } from '../../../../../actors/shard/engine/index/analysis';
import { rng } from '../../../../support/rng';

// The regexp the tokenizer used to be (kept here as the oracle): identical tokens on ordinary text,
// but it needs stack in proportion to a token's length.
const W = String.raw`(?:[^\P{L}\p{Script=Han}\p{Script=Hiragana}]|[\p{M}\p{Nd}\p{Nl}\p{No}\p{Pc}])`;
const L = String.raw`[^\P{L}\p{Script=Han}\p{Script=Hiragana}]`;
const ORACLE = new RegExp(
  String.raw`[\p{Script=Han}\p{Script=Hiragana}]|${W}+(?:(?:(?<=${L})[:.'’·](?=${L})|(?<=\p{Nd})[.,;'’](?=\p{Nd}))${W}+)*`,
  'gu',
);
function oracle(text: string): string[] {
  const out: string[] = [];
  ORACLE.lastIndex = 0;
  for (let m = ORACLE.exec(text); m !== null; m = ORACLE.exec(text)) {
    const t = m[0].toLowerCase();
    if (t.length <= 255) out.push(t);
    else for (let i = 0; i < t.length; i += 255) out.push(t.slice(i, i + 255));
  }
  return out;
}

// Letters, digits, every mid character, Han/Hiragana (incl. the Han numeral 〇), marks, connectors,
// non-BMP letters and emoji, a lone surrogate, other scripts and separators.
const ALPHABET = [
  'a', 'B', 'z', 'É', 'ß', '0', '7', '٣', '_', '‿', ':', '.', "'", '’', '·', ',', ';', ' ', '-', '\n', '/',
  '漢', '字', 'ひ', 'ら', 'カ', '〇', '一', '\u0301', '\u0903', 'я', 'Ж', 'ⅷ', '½', '𝐀', '😀', '\ud800', 'ﬁ',
];

describe('standard tokenizer', () => {
  it('splits exactly as the UAX#29-style regexp it replaces, on 5,000 random strings', () => {
    const r = rng(42);
    for (let k = 0; k < 5000; k++) {
      const len = 1 + Math.floor(r() * 40);
      let s = '';
      for (let i = 0; i < len; i++) s += ALPHABET[Math.floor(r() * ALPHABET.length)];
      expect([s, analyze(s)]).toEqual([s, oracle(s)]);
    }
  });

  it('keeps the word-break rules: letters across [:.’·], digits across [.,;’]', () => {
    expect(analyze("O'Neil's e.g. 3.14 1,000;5 a:b x·y 3.a a.3 U.S.A. l’été")).toEqual([
      "o'neil's", 'e.g', '3.14', '1,000;5', 'a:b', 'x·y', '3', 'a', 'a', '3', 'u.s.a', 'l’été',
    ]);
    expect(analyze('東京タワー 〇a')).toEqual(['東', '京', 'タワー', '〇', 'a']); // a Han numeral starts its own token…
    expect(analyze('a〇')).toEqual(['a〇']); // …but continues a word
  });

  it('splits a single 8 MiB token into 255-char tokens without exhausting the stack', () => {
    const huge = 'x'.repeat(8 * 1024 * 1024);
    const tokens = analyze(huge);
    expect(tokens).toHaveLength(Math.ceil(huge.length / 255));
    expect(tokens[0]).toBe('x'.repeat(255));
    expect(tokens[tokens.length - 1]).toBe('x'.repeat(huge.length % 255));
  });
});
