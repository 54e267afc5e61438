import { decodeBatch, encodeBatch } from '../../../actors/shard/opCodec';

describe('opCodec', () => {
  it('round-trips sources byte for byte, including newlines and unicode', () => {
    const items = [
      { op: 'index', id: '1', source: '{"a":1}' },
      { op: 'delete', id: '2' },
      { op: 'index', id: 'é', source: '{\n  "t": "naïve \\n 😀"\n}' },
    ];
    const text = encodeBatch(items, (i) => i.source);
    expect(decodeBatch(text)).toEqual(items);
  });

  it('decodes an empty batch to nothing', () => {
    expect(decodeBatch('')).toEqual([]);
  });
});
