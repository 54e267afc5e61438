import { formatTimeValue, parseTimeValue } from '../../../actors/wire/timeValue';
import { keepAliveTooLarge } from '../../../actors/search/keepAlive';
import { EsError } from '../../../actors/wire/esErrors';

function failure(v: string, name = 'scroll'): EsError {
  try {
    parseTimeValue(v, name);
  } catch (e) {
    return e as EsError;
  }
  throw new Error(`expected ${v} to fail`);
}

describe('parseTimeValue', () => {
  it.each([
    ['1d', 86_400_000],
    ['24h', 86_400_000],
    ['5m', 300_000],
    ['30s', 30_000],
    ['30S', 30_000],
    ['250ms', 250],
    ['1500micros', 1],
    ['2000000nanos', 2],
    [' 10s ', 10_000],
    ['-1', -1],
    ['-1s', -1],
    ['0', 0],
    ['000', 0],
    ['0s', 0],
  ])('parses %j as %d ms', (v, ms) => {
    expect(parseTimeValue(v, 'scroll')).toBe(ms);
  });

  it.each([
    ['5', 'failed to parse setting [scroll] with value [5] as a time value: unit is missing or unrecognized'],
    ['5M', 'failed to parse setting [scroll] with value [5M] as a time value: unit is missing or unrecognized'],
    ['', 'failed to parse setting [scroll] with value [] as a time value: unit is missing or unrecognized'],
    ['-5s', 'failed to parse setting [scroll] with value [-5s] as a time value: negative durations are not supported'],
    ['1.5m', 'failed to parse [1.5m], fractional time values are not supported'],
    ['xs', 'failed to parse [xs]'],
  ])('rejects %j with ES text', (v, reason) => {
    const e = failure(v);
    expect(e.type).toBe('parse_exception');
    expect(e.status).toBe(400);
    expect(e.message).toBe(reason);
  });

  it('names the setting in the message', () => {
    expect(failure('7', 'keep_alive').message).toContain('[keep_alive]');
  });
});

describe('formatTimeValue', () => {
  it.each([
    [86_400_000, '1d'],
    [172_800_000, '2d'],
    [90_000, '1.5m'],
    [100_000, '1.6m'],
    [3_600_000, '1h'],
    [5_400_000, '1.5h'],
    [60_000, '1m'],
    [1_000, '1s'],
    [1_050, '1s'],
    [999, '999ms'],
    [0, '0s'],
    [-1, '-1'],
  ])('prints %d ms as %s', (ms, s) => {
    expect(formatTimeValue(ms)).toBe(s);
  });
});

describe('keepAliveTooLarge', () => {
  it('uses ES text with both values formatted', () => {
    const e = keepAliveTooLarge(172_800_000, 86_400_000);
    expect(e.type).toBe('illegal_argument_exception');
    expect(e.message).toBe(
      'Keep alive for request (2d) is too large. It must be less than (1d). This limit can be set by changing the [search.max_keep_alive] cluster level setting.',
    );
  });
});
