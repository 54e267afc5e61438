import { CircuitBreakerService, type HeapProbe } from '../../../actors/wire/circuitBreaker';
import { formatBytes, parseBytes, parseMemorySize } from '../../../actors/wire/byteSize';
import { EsError, toErrorBody } from '../../../actors/wire/esErrors';

const MB = 1024 * 1024;

/** A heap whose figures the test sets; `collect` frees `garbage` bytes. */
function heap(max: number, used: number, garbage = 0): HeapProbe & { usedNow: number; collected: number } {
  const h = {
    usedNow: used,
    collected: 0,
    used: () => h.usedNow,
    max: () => max,
    collect() {
      h.collected++;
      h.usedNow -= garbage;
      garbage = 0;
    },
  };
  return h;
}

function service(settings: Record<string, unknown>, probe: HeapProbe, now = () => 1_000_000): CircuitBreakerService {
  return new CircuitBreakerService((k) => settings[k], probe, now);
}

function trip(run: () => void): EsError {
  try {
    run();
  } catch (e) {
    return e as EsError;
  }
  throw new Error('expected a circuit_breaking_exception');
}

describe('byte sizes as ES prints and parses them', () => {
  it.each([
    [0, '0b'], [1023, '1023b'], [1024, '1kb'], [1536, '1.5kb'], [1017560880, '970.4mb'], [1020054016, '972.7mb'],
    // format1Decimals cuts the decimal, it does not round: 1.99kb prints 1.9kb
    [Math.floor(1.99 * 1024), '1.9kb'], [1024 ** 3, '1gb'], [-1, '-1b'],
  ])('formats %i as %s', (n, text) => expect(formatBytes(n)).toBe(text));

  it('parses byte values and heap ratios as memory-size settings do', () => {
    expect(parseBytes('512mb', 's')).toBe(512 * MB);
    expect(parseBytes(' 1K ', 's')).toBe(1024);
    expect(parseBytes('-1', 's')).toBe(-1);
    expect(parseBytes('0', 's')).toBe(0);
    expect(parseMemorySize('60%', 's', 1000)).toBe(600);
    expect(parseMemorySize('0.5%', 's', 1000)).toBe(5);
    expect(() => parseBytes('12', 'indices.breaker.request.limit')).toThrow(
      'failed to parse setting [indices.breaker.request.limit] with value [12] as a size in bytes: unit is missing or unrecognized',
    );
    expect(() => parseMemorySize('150%', 's', 1000)).toThrow('percentage should be in [0-100], got [150]');
    expect(() => parseMemorySize('x%', 's', 1000)).toThrow('failed to parse [x] as a double');
    expect(() => parseBytes('-5b', 's')).toThrow('failed to parse setting [s] with value [-5b] as a size in bytes');
  });
});

describe('child breakers', () => {
  it("default to ES 8's limits and overheads over the heap", () => {
    const st = service({}, heap(1000 * MB, 0)).stats();
    expect(Object.keys(st)).toEqual(['request', 'fielddata', 'inflight_requests', 'accounting', 'parent']);
    expect([st.request.limit_size_in_bytes, st.request.overhead]).toEqual([600 * MB, 1]);
    expect([st.fielddata.limit_size_in_bytes, st.fielddata.overhead]).toEqual([400 * MB, 1.03]);
    expect([st.inflight_requests.limit_size_in_bytes, st.inflight_requests.overhead]).toEqual([1000 * MB, 2]);
    expect(st.parent.limit_size_in_bytes).toBe(950 * MB);
    expect(service({ 'indices.breaker.total.use_real_memory': false }, heap(1000 * MB, 0)).stats().parent.limit_size_in_bytes).toBe(700 * MB);
  });

  it('trips when used bytes times the overhead would pass the limit, and counts the trip', () => {
    const s = service({ 'network.breaker.inflight_requests.limit': '1000b', 'indices.breaker.total.use_real_memory': false }, heap(MB, 0));
    const b = s.breaker('inflight_requests');
    b.addEstimateBytesAndMaybeBreak(400, '<http_request>'); // 800 with overhead 2
    const e = trip(() => b.addEstimateBytesAndMaybeBreak(101, '<http_request>'));
    expect(toErrorBody(e)).toEqual({
      error: {
        root_cause: [{
          type: 'circuit_breaking_exception',
          reason: '[inflight_requests] Data too large, data for [<http_request>] would be [1002/1002b], which is larger than the limit of [1000/1000b]',
          bytes_wanted: 1002, bytes_limit: 1000, durability: 'TRANSIENT',
        }],
        type: 'circuit_breaking_exception',
        reason: '[inflight_requests] Data too large, data for [<http_request>] would be [1002/1002b], which is larger than the limit of [1000/1000b]',
        bytes_wanted: 1002, bytes_limit: 1000, durability: 'TRANSIENT',
      },
      status: 429,
    });
    expect([b.used, b.stats().tripped, b.stats().estimated_size_in_bytes]).toEqual([400, 1, 400]);
  });

  it('trips every reservation at limit 0 and none at -1', () => {
    const s = service({ 'indices.breaker.request.limit': '0', 'indices.breaker.fielddata.limit': '-1', 'indices.breaker.total.use_real_memory': false }, heap(10 * MB, 0));
    expect(trip(() => s.breaker('request').addEstimateBytesAndMaybeBreak(0, 'x')).message).toBe(
      '[request] Data too large, data for [x] would be [0/0b], which is larger than the limit of [0/0b]',
    );
    s.breaker('fielddata').addEstimateBytesAndMaybeBreak(5 * MB, 'f');
    expect(s.breaker('fielddata').used).toBe(5 * MB);
  });

  it('reads its limit and overhead at each use (dynamic settings)', () => {
    const settings: Record<string, unknown> = { 'indices.breaker.total.use_real_memory': false };
    const s = service(settings, heap(1000 * MB, 0));
    const acct = s.account('request');
    acct.reserve(100, 'a');
    settings['indices.breaker.request.limit'] = '150b';
    settings['indices.breaker.request.overhead'] = 2;
    expect(trip(() => acct.reserve(1, 'a')).message).toContain('would be [202/202b], which is larger than the limit of [150/150b]');
    expect(s.stats().request).toMatchObject({ limit_size_in_bytes: 150, limit_size: '150b', estimated_size_in_bytes: 100, overhead: 2, tripped: 1 });
  });

  it('gives back what an account holds when it is closed', () => {
    const s = service({}, heap(1000 * MB, 0));
    const a = s.account('request');
    const b = s.account('request');
    a.reserve(10 * MB, 'x');
    b.reserve(5 * MB, 'y');
    a.close();
    expect(s.breaker('request').used).toBe(5 * MB);
    b.release(10 * MB); // never more than it holds
    expect(s.breaker('request').used).toBe(0);
  });
});

describe('the parent breaker', () => {
  it('with real memory, compares the heap in use plus the new bytes to 95% of the heap', () => {
    const h = heap(100 * MB, 90 * MB);
    const s = service({ 'indices.breaker.request.limit': '80%' }, h);
    s.account('request').reserve(4 * MB, 'ok'); // 94mb <= 95mb
    const e = trip(() => s.account('request').reserve(6 * MB, '<agg [tags]>'));
    expect(e.status).toBe(429);
    expect(e.message).toBe(
      '[parent] Data too large, data for [<agg [tags]>] would be [100663296/96mb], which is larger than the limit of [99614720/95mb], ' +
        'real usage: [94371840/90mb], new bytes reserved: [6291456/6mb], usages [request=10485760/10mb, fielddata=0/0b, inflight_requests=0/0b, accounting=0/0b]',
    ); // as ES: the child has added the bytes when it asks the parent, so its usage includes them
    expect(e.extra.meta).toEqual({ bytes_wanted: 100663296, bytes_limit: 99614720, durability: 'TRANSIENT' });
    // the child gave the bytes back; the parent counted the trip
    expect([s.breaker('request').used, s.stats().parent.tripped, s.stats().request.tripped]).toEqual([4 * MB, 1, 0]);
  });

  it('collects garbage once before it trips on real memory, at most every 2 s', () => {
    let now = 10_000;
    const h = heap(100 * MB, 99 * MB, 30 * MB);
    const s = service({}, h, () => now);
    s.account('request').reserve(MB, 'x'); // 100mb > 95mb: collect, then 70mb fits
    expect([h.collected, h.usedNow]).toEqual([1, 69 * MB]);
    h.usedNow = 99 * MB;
    now += 100;
    expect(trip(() => s.account('request').reserve(MB, 'x')).type).toBe('circuit_breaking_exception');
    expect(h.collected).toBe(1); // too soon for another collection
  });

  it("without real memory, sums the children's usage times their overheads; durability follows the larger share", () => {
    const s = service({ 'indices.breaker.total.use_real_memory': false, 'indices.breaker.total.limit': '1000b' }, heap(MB, 0));
    s.account('fielddata').reserve(500, 'f'); // 515 with overhead 1.03 (PERMANENT)
    s.account('request').reserve(400, 'r'); // 915
    const e = trip(() => s.account('request').reserve(100, 'r'));
    expect(e.message).toBe(
      '[parent] Data too large, data for [r] would be [1015/1015b], which is larger than the limit of [1000/1000b], usages [request=500/500b, fielddata=515/515b, inflight_requests=0/0b, accounting=0/0b]',
    );
    expect(e.extra.meta).toEqual({ bytes_wanted: 1015, bytes_limit: 1000, durability: 'PERMANENT' });
    expect(s.stats().parent).toMatchObject({ estimated_size_in_bytes: 915, tripped: 1 });
  });

  it('reports the heap in use as its estimate', () => {
    const st = service({}, heap(1024 * MB, 300 * MB)).stats().parent;
    expect(st).toEqual({ limit_size_in_bytes: 1020054732, limit_size: '972.7mb', estimated_size_in_bytes: 300 * MB, estimated_size: '300mb', overhead: 1, tripped: 0 });
  });
});

describe('search budgets', () => {
  it('carry search.max_buckets and reserve on the request breaker until closed', () => {
    const s = service({ 'search.max_buckets': 10 }, heap(1000 * MB, 0));
    const scope = s.searchScope();
    expect(scope.maxBuckets).toBe(10);
    scope.reserve(1234, 'x');
    expect(s.breaker('request').used).toBe(1234);
    scope.close();
    expect(s.breaker('request').used).toBe(0);
    expect(service({}, heap(MB, 0)).searchScope().maxBuckets).toBe(65_536);
  });
});
