/**
 * Batches logged in parts (actors/shard/logParts.ts): applied only when every part came, in order,
 * with nothing else between them; an abandoned batch is never applied, and a snapshot never stands
 * for a position inside an unfinished one.
 */
import { PartAssembler, parsePartId, partMsgId } from '../../../actors/shard/logParts';

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array) => new TextDecoder().decode(b);

describe('PartAssembler', () => {
  it('names parts <batch>~<i>/<n> and reads the names back', () => {
    expect(partMsgId('b-1', 2, 3)).toBe('b-1~2/3');
    expect(parsePartId('b-1~2/3')).toEqual({ batch: 'b-1', i: 2, n: 3 });
    expect(parsePartId('a-uuid-without-parts')).toBeUndefined();
  });

  it('applies a batch with its last part, the parts joined in order', () => {
    const a = new PartAssembler();
    expect(a.accept(10, bytes('he'), 'x~1/3')).toEqual({ kind: 'part' });
    expect(a.pendingFrom).toBe(10);
    expect(a.accept(11, bytes('ll'), 'x~2/3')).toEqual({ kind: 'part' });
    const w = a.accept(12, bytes('o'), 'x~3/3');
    expect(w.kind === 'whole' && [text(w.data), w.msgId]).toEqual(['hello', 'x']);
    expect(a.pendingFrom).toBeUndefined();
  });

  it('abandons a batch when anything else comes between its parts, and never applies its later parts', () => {
    const a = new PartAssembler();
    a.accept(1, bytes('a'), 'x~1/2');
    const other = a.accept(2, bytes('whole'), 'y');
    expect(other.kind === 'whole' && other.msgId).toBe('y');
    expect(a.accept(3, bytes('b'), 'x~2/2')).toEqual({ kind: 'stray' });
    a.accept(4, bytes('a'), 'p~1/2');
    a.accept(5, bytes('a'), 'q~1/2'); // another writer's batch starts: p is abandoned
    expect(a.accept(6, bytes('b'), 'p~2/2')).toEqual({ kind: 'stray' });
    expect(a.accept(7, bytes('x'), 'r~2/2')).toEqual({ kind: 'stray' }); // a part without its first
  });
});
