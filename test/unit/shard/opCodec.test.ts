import { decodeBatch, encodeBatch } from '../../../actors/shard/opCodec';

describe('opCodec', () => {
  const items = [
    { batch: { after: 41 } },
    { op: 'index', id: '1', seqNo: 42, version: 1, source: '{"a":1}' },
    { op: 'delete', id: '2', seqNo: 43, version: 2 },
    { op: 'index', id: 'é', seqNo: 44, version: 1, routing: 'r\n1', source: '{\n  "t": "naïve \\n 😀 \ud800"\n}' },
    { op: 'index', id: 'empty', seqNo: 45, version: 1, source: '' },
  ];

  it('round-trips sources byte for byte, including newlines, unicode and lone surrogates', () => {
    const text = encodeBatch(items, (i) => ('source' in i ? i.source : undefined));
    expect(decodeBatch(text)).toEqual(items);
  });

  it('writes the heads as one JSON array and the sources raw, back to back', () => {
    const text = encodeBatch([{ op: 'index', id: '1', source: '{"x":"y"}' }, { op: 'delete', id: '2' }], (i) => i.source);
    expect(text).toBe('[[{"op":"index","id":"1"},{"op":"delete","id":"2"}],[9,-1]]\n{"x":"y"}');
  });

  it('does not change the items it encodes', () => {
    const before = structuredClone(items);
    encodeBatch(items, (i) => ('source' in i ? i.source : undefined));
    expect(items).toEqual(before);
  });

  it('reads batches in the older line format (the document log keeps them)', () => {
    const old = '{"batch":{"after":41}}\n{"op":"index","id":"1","seqNo":42,"version":1,"len":7}\n{"a":1}\n{"op":"delete","id":"2","seqNo":43,"version":2}\n'
      + `{"op":"index","id":"é","seqNo":44,"version":1,"routing":"r\\n1","len":${items[3].source!.length}}\n${items[3].source}\n`
      + '{"op":"index","id":"empty","seqNo":45,"version":1,"len":0}\n\n';
    expect(decodeBatch(old)).toEqual(items);
  });

  it('decodes an empty batch to nothing', () => {
    expect(encodeBatch([], () => undefined)).toBe('');
    expect(decodeBatch('')).toEqual([]);
  });
});
