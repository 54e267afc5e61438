import { checkDiskSettings, diskLevel, diskThresholds, freeBytesThreshold, parseWatermark } from '../../../actors/cluster/diskThreshold';
import { lifecycleReserve, maxStorageFromLog } from '../../../actors/cluster/floodStage';
import { EsError } from '../../../actors/wire/esErrors';

const GB = 1024 ** 3;
const MB = 1024 ** 2;
const of = (s: Record<string, string>) => diskThresholds((k) => s[k]);
const P = 'cluster.routing.allocation.disk.watermark.';

describe('disk watermarks (ES DiskThresholdSettings)', () => {
  it('reads percentages, ratios and byte sizes as RelativeByteSizeValue does', () => {
    expect(parseWatermark('85%', 'k')).toEqual({ ratio: 0.85, text: '85%' });
    expect(parseWatermark('0.9', 'k')).toEqual({ ratio: 0.9, text: '0.9' });
    expect(parseWatermark('500mb', 'k')).toEqual({ freeBytes: 500 * MB, text: '500mb' });
    expect(parseWatermark('0', 'k')).toEqual({ freeBytes: 0, text: '0' });
    expect(() => parseWatermark('120%', 'k')).toThrow('unable to parse [k=120%] as either percentage or bytes');
    expect(() => parseWatermark('lots', 'k')).toThrow(EsError);
  });

  it('defaults to 85/90/95% with 200/150/100 GB headrooms, and drops the headrooms once a watermark is set', () => {
    const d = of({});
    expect([d.low, d.high, d.flood].map((w) => w.text)).toEqual(['85%', '90%', '95%']);
    expect([d.lowHeadroom, d.highHeadroom, d.floodHeadroom]).toEqual([200 * GB, 150 * GB, 100 * GB]);
    expect(of({ [`${P}flood_stage`]: '97%' }).floodHeadroom).toBe(-1);
  });

  it('caps the free space a percentage asks for with the max headroom (a 10 TB disk floods at 100 GB free, not 500 GB)', () => {
    const d = of({});
    expect(freeBytesThreshold(100 * GB, d.flood, d.floodHeadroom)).toBe(100 * GB - Math.ceil(0.95 * 100 * GB));
    expect(freeBytesThreshold(10 * 1024 * GB, d.flood, d.floodHeadroom)).toBe(100 * GB);
    expect(diskLevel(d, 10 * 1024 * GB, 180 * GB)).toBe('low');
    expect(diskLevel(d, 10 * 1024 * GB, 99 * GB)).toBe('flood');
  });

  it('names the level a store is at', () => {
    const d = of({});
    expect([0.5, 0.86, 0.91, 0.96].map((used) => diskLevel(d, 40 * MB, 40 * MB * (1 - used)))).toEqual(['ok', 'low', 'high', 'flood']);
    const abs = of({ [`${P}low`]: '30mb', [`${P}high`]: '20mb', [`${P}flood_stage`]: '10mb' });
    expect(diskLevel(abs, GB, 15 * MB)).toBe('high');
  });

  it('refuses inconsistent watermarks with ES’s messages', () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ [`${P}low`]: '95%' }, 'low disk watermark [95%] more than high disk watermark [90%]'],
      [{ [`${P}high`]: '96%' }, 'high disk watermark [96%] more than flood stage disk watermark [95%]'],
      [{ [`${P}low`]: '10mb', [`${P}high`]: '20mb', [`${P}flood_stage`]: '5mb' }, 'low disk watermark [10mb] less than high disk watermark [20mb]'],
      [{ [`${P}low`]: '50%', [`${P}high`]: '20mb', [`${P}flood_stage`]: '10mb' }, 'unable to consistently parse'],
      [{ [`${P}low`]: '85%', [`${P}low.max_headroom`]: '10gb' }, 'high disk max headroom [-1] is not set, while the low disk max headroom is set [10gb]'],
      [{ [`${P}low.max_headroom`]: '10gb' }, 'high disk max headroom [150gb] more than low disk max headroom [10gb]'],
      [{ [`${P}low.max_headroom`]: '1gb', [`${P}high.max_headroom`]: '2gb', [`${P}flood_stage.max_headroom`]: '1gb' }, 'high disk max headroom [2gb] more than low disk max headroom [1gb]'],
    ];
    for (const [s, msg] of cases) {
      let err: EsError | undefined;
      try {
        checkDiskSettings(() => undefined, s);
      } catch (e) {
        err = e as EsError;
      }
      expect([err?.status, err?.type, err?.message]).toEqual([400, 'illegal_argument_exception', expect.stringContaining(msg)]);
    }
  });

  it('keeps a lifecycle reserve of 2 % of the store, at least 1 MB and at most 1 GB', () => {
    expect(lifecycleReserve(40 * MB)).toBe(MB);
    expect(lifecycleReserve(10 * GB)).toBe(Math.floor(10 * GB * 0.02));
    expect(lifecycleReserve(1024 * GB)).toBe(GB);
  });

  it('reads the last Max Storage a nats-server printed (1024-based units)', () => {
    const log = '[1] [INF]   Max Storage:     57.95 GB\n...\n[2] [INF]   Max Storage:     40.00 MB\n';
    expect(maxStorageFromLog(log)).toBe(40 * MB);
    expect(maxStorageFromLog('nothing')).toBeUndefined();
  });
});
