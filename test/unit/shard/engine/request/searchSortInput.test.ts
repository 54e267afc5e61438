import { EsError } from '../../../../../actors/wire/esErrors';
import { parseSort } from '../../../../../actors/shard/engine/request/searchSort';
import { Locator } from '../../../../../actors/shard/engine/base/xcontent';

function errorOf(sort: unknown, text?: string): EsError {
  try {
    parseSort(sort, new Locator(text));
  } catch (e) {
    return e as EsError;
  }
  throw new Error('parsed');
}

describe('sort `missing`', () => {
  it('refuses an object or an array as ES’s ObjectParser does (400, not a 500)', () => {
    for (const [missing, token] of [[{}, 'START_OBJECT'], [[1], 'START_ARRAY']] as const) {
      const e = errorOf([{ n: { missing } }]);
      expect([e.type, e.status, e.message.replace(/^\[\d+:\d+\] /, '')]).toEqual([
        'x_content_parse_exception',
        400,
        `[field_sort] missing doesn't support values of type: ${token}`,
      ]);
    }
  });

  it('accepts strings, numbers, booleans and null (= the default)', () => {
    expect(parseSort([{ n: { missing: '_first' } }])[0].missing).toBe('_first');
    expect(parseSort([{ n: { missing: 7 } }])[0].missing).toBe(7);
    expect(parseSort([{ n: { missing: true } }])[0].missing).toBe(true);
    expect(parseSort([{ n: { missing: null } }])[0].missing).toBeUndefined();
  });
});
