/**
 * The ASCII fast path of `analyze` (ingest) against the regex tokenizer it skips: the same tokens.
 */
import { analyze } from '../../../../../actors/shard/engine';
import { rng } from '../../../../support/rng';

// The tokenizer regex of analysis.ts, as the reference.
const W = String.raw`(?:[^\P{L}\p{Script=Han}\p{Script=Hiragana}]|[\p{M}\p{Nd}\p{Nl}\p{No}\p{Pc}])`;
const L = String.raw`[^\P{L}\p{Script=Han}\p{Script=Hiragana}]`;
const TOKEN = new RegExp(String.raw`[\p{Script=Han}\p{Script=Hiragana}]|${W}+(?:(?:(?<=${L})[:.'’·](?=${L})|(?<=\p{Nd})[.,;'’](?=\p{Nd}))${W}+)*`, 'gu');
function reference(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(TOKEN)) {
    const t = m[0].toLowerCase();
    if (t.length <= 255) out.push(t);
    else for (let i = 0; i < t.length; i += 255) out.push(t.slice(i, i + 255));
  }
  return out;
}

describe('analyze', () => {
  it('gives the regex tokenizer’s tokens on random ASCII and mixed texts', () => {
    const alphabet = ['a', 'Z', 'q', '0', '9', '_', ' ', ' ', '\t', '\n', '\r', '\f', '\v', '.', ',', ':', "'", '-', 'é', '日', '’', '😀'];
    for (let seed = 1; seed <= 3000; seed++) {
      const r = rng(seed);
      const plain = r() < 0.7;
      const chars = plain ? alphabet.slice(0, 13) : alphabet;
      const text = Array.from({ length: Math.floor(r() * 40) }, () => chars[Math.floor(r() * chars.length)]).join('');
      expect({ text, tokens: analyze(text) }).toEqual({ text, tokens: reference(text) });
    }
  });

  it('splits tokens longer than 255 characters on the fast path as on the regex path', () => {
    const text = `short ${'Ab'.repeat(300)} tail`;
    expect(analyze(text)).toEqual(reference(text));
    expect(analyze(text).map((t) => t.length)).toEqual([5, 255, 255, 90, 4]);
  });
});
