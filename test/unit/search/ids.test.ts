import { createHmac, randomBytes } from 'node:crypto';
import { hmacSha256, IdCodec } from '../../../actors/search/ids';
import { rng } from '../../support/rng';
import { EsError } from '../../../actors/wire/esErrors';

const codec = new IdCodec(randomBytes(32));
const ctx = '0190a1b2-c3d4-4e5f-8a9b-0c1d2e3f4a5b';

describe('scroll and PIT ids', () => {
  it('round-trips a scroll id with its position, keeping big longs exact', () => {
    const id = codec.scrollId(ctx, { after: [9223372036854775807n, 'x', 3], page: 2 });
    expect(codec.parseScrollId(id)).toEqual({ contextId: ctx, pos: { after: [9223372036854775807n, 'x', 3], page: 2 } });
  });

  it('is URL-safe padded base64', () => {
    expect(codec.pitId(ctx)).toMatch(/^[A-Za-z0-9_-]+=*$/);
    expect(codec.pitId(ctx).length % 4).toBe(0);
  });

  it.each([['junk'], [''], ['!!!!'], ['A'.repeat(100)]])('rejects a malformed scroll id %j with Cannot parse scroll id', (bad) => {
    expect(() => codec.parseScrollId(bad)).toThrow(new EsError('illegal_argument_exception', 400, 'Cannot parse scroll id'));
  });

  it('rejects a scroll id whose bytes were tampered with', () => {
    const id = codec.scrollId(ctx, { page: 1 });
    const buf = Buffer.from(id, 'base64url');
    buf[5] ^= 1;
    expect(() => codec.parseScrollId(buf.toString('base64url'))).toThrow('Cannot parse scroll id');
  });

  it('does not accept a PIT id as a scroll id, nor one signed by another node key', () => {
    expect(() => codec.parseScrollId(codec.pitId(ctx))).toThrow('Cannot parse scroll id');
    const other = new IdCodec(randomBytes(32));
    expect(() => codec.parsePitId(other.pitId(ctx))).toThrow(`invalid id: [${other.pitId(ctx)}]`);
  });
});

describe('HMAC-SHA256 from precomputed pads', () => {
  it('gives the bytes createHmac gives, for random keys and bodies (ids signed before stay valid)', () => {
    const r = rng(7);
    for (let i = 0; i < 500; i++) {
      const key = randomBytes(Math.floor(r() * 100));
      for (let j = 0; j < 3; j++) {
        const body = randomBytes(Math.floor(r() * (j === 2 ? 6000 : 80)));
        expect(hmacSha256(key, body).toString('hex')).toBe(createHmac('sha256', key).update(body).digest('hex'));
      }
    }
  });
});
