/**
 * The parser-free read of common bulk action lines gives what JSON.parse gives, or leaves the line
 * to JSON.parse: never a different value, never accepts what JSON.parse refuses.
 */
import { plainActionLine } from '../../../../actors/edge/routes/bulk';
import { rng } from '../../../support/rng';

describe('plainActionLine', () => {
  it('reads the usual lines as JSON.parse does', () => {
    expect(plainActionLine('{"index":{"_index":"books","_id":"1"}}')).toEqual({ index: { _index: 'books', _id: '1' } });
    expect(plainActionLine('{"create":{"_id":"é 😀"}}')).toEqual({ create: { _id: 'é 😀' } });
    expect(plainActionLine('{"delete":{"_index":"x"}}')).toEqual({ delete: { _index: 'x' } });
    expect(plainActionLine('{"index":{}}')).toEqual({ index: {} });
    expect(plainActionLine('{"index":{"_index":"a","_id":""}}')).toEqual({ index: { _index: 'a', _id: '' } });
  });

  it('leaves everything else to JSON.parse, and never reads a line JSON.parse refuses', () => {
    const parts = ['{', '}', '"index"', '"update"', ':', ',', '"_index"', '"_id"', '"a"', '"b\\"c"', '"\t"', ' ', '"routing"', '1', '{"index":{', '"_index":"a"', '"_id":"b"', '}}'];
    const values = ['"a"', '""', '"é"', '"b\\"c"', '"\t"', '"\u0041"', '1', 'null', '"x y"'];
    const pick = <T>(r: () => number, xs: T[]) => xs[Math.floor(r() * xs.length)];
    let read = 0;
    for (let seed = 1; seed <= 20000; seed++) {
      const r = rng(seed);
      const l =
        r() < 0.5
          ? Array.from({ length: 1 + Math.floor(r() * 6) }, () => parts[Math.floor(r() * parts.length)]).join('')
          : `{${pick(r, ['"index"', '"create"', '"delete"', '"update"', ' "index"'])}:{${r() < 0.6 ? `"_index":${pick(r, values)}` : ''}${pick(r, ['', ',', ', ', ''])}${r() < 0.6 ? `"_id":${pick(r, values)}` : ''}${pick(r, ['}}', '}}', '} }', '}', '}}}'])}`;
      const got = plainActionLine(l);
      if (got === undefined) continue;
      read++;
      expect({ l, got }).toEqual({ l, got: JSON.parse(l) });
      expect(Object.keys(got[Object.keys(got)[0]])).toEqual(Object.keys(JSON.parse(l)[Object.keys(got)[0]]));
    }
    for (const l of ['{"index":{"_index":"a""_id":"b"}}', '{"index":{"_index":"a",}}', '{"index":{"_id":"b","_index":"a"}}', '{"index":{"_index":"a\\n"}}', '{"index":{"_id":"a\tb"}}', '{"index":{"_id":"1"}} ', '{"index":{"_id":"1"}}}']) {
      expect(plainActionLine(l)).toBeUndefined();
    }
    expect(read).toBeGreaterThan(300);
  });
});
