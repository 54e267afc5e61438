import { DEFAULT_DATE_FORMAT, dateFormatter, parseDateMath, analyze } from '../../../../../actors/shard/engine';

const utc = (...a: [number, number, number?, number?, number?, number?, number?]) => Date.UTC(...a);

describe('date formats', () => {
  it.each([
    ['2021-02-11', utc(2021, 1, 11), 0],
    ['2021-02', utc(2021, 1, 1), 0],
    ['2021', utc(2021, 0, 1), 0],
    ['2021-02-11T08:30', utc(2021, 1, 11, 8, 30), 0],
    ['2021-02-11T08:30:04.828Z', utc(2021, 1, 11, 8, 30, 4, 828), 0],
    ['2021-02-11T08:30:04.828733123Z', utc(2021, 1, 11, 8, 30, 4, 828), 733123],
    ['2021-02-11T10:30:04+02:00', utc(2021, 1, 11, 8, 30, 4), 0],
    ['2021-02-11T10:30:04+0200', utc(2021, 1, 11, 8, 30, 4), 0],
    ['1612945804828', 1612945804828, 0],
    ['-1000', -1000, 0],
    ['1571646604828.733', 1571646604828, 733000],
  ])('parses %j with the default format', (text, ms, ns) => {
    expect(dateFormatter(DEFAULT_DATE_FORMAT).parse(text)).toEqual({ ms, ns });
  });

  it.each(['2021-2-11', '2021-02-30', '11/02/2021', 'yesterday', '2021-02-11T25:00'])('rejects %j with the default format', (text) => {
    expect(() => dateFormatter().parse(text)).toThrow(`failed to parse date field [${text}] with format [${DEFAULT_DATE_FORMAT}]`);
  });

  it.each([
    ['yyyy/MM/dd HH:mm:ss', '2021/02/11 08:30:04', utc(2021, 1, 11, 8, 30, 4)],
    ['dd/MM/yyyy', '11/02/2021', utc(2021, 1, 11)],
    ["yyyy-MM-dd'T'HH:mm:ss.SSSXXX", '2021-02-11T08:30:04.828Z', utc(2021, 1, 11, 8, 30, 4, 828)],
    ['MMM d, yyyy', 'Feb 3, 2021', utc(2021, 1, 3)],
    ['epoch_second', '1612945804', 1612945804000],
    ['basic_date', '20210211', utc(2021, 1, 11)],
    ['strict_date_hour_minute_second', '2021-02-11T08:30:04', utc(2021, 1, 11, 8, 30, 4)],
  ])('parses with %s', (format, text, ms) => {
    expect(dateFormatter(format).parse(text).ms).toBe(ms);
  });

  it.each([
    ['strict_date_optional_time', { ms: utc(2021, 1, 11, 8, 30, 4, 828), ns: 733000 }, '2021-02-11T08:30:04.828Z'],
    ['strict_date_optional_time_nanos', { ms: utc(2021, 1, 11, 8, 30, 4, 828), ns: 733000 }, '2021-02-11T08:30:04.828733Z'],
    ['strict_date_optional_time_nanos', { ms: utc(2021, 1, 11, 8, 30, 4), ns: 0 }, '2021-02-11T08:30:04.000Z'],
    ['epoch_millis', { ms: 1571646604828, ns: 733000 }, '1571646604828.733'],
    ['epoch_second', { ms: 1612945804828, ns: 0 }, '1612945804.828'],
    ['yyyy-MM-dd', { ms: utc(2021, 1, 11, 23), ns: 0 }, '2021-02-11'],
    ['strict_date_optional_time', { ms: -1, ns: 0 }, '1969-12-31T23:59:59.999Z'],
    ['strict_date_optional_time', { ms: 0, ns: 0, msBig: 2n ** 63n - 1n }, '+292278994-08-17T07:12:55.807Z'],
  ])('prints with %s', (format, instant, text) => {
    expect(dateFormatter(format).format(instant)).toBe(text);
  });

  it('fills absent fields when rounding up: time at its end, month and day at 1', () => {
    expect(dateFormatter().parse('2021-02-11', true)).toEqual({ ms: utc(2021, 1, 11, 23, 59, 59, 999), ns: 999999 });
    expect(dateFormatter().parse('2021', true).ms).toBe(utc(2021, 0, 1, 23, 59, 59, 999));
  });
});

describe('date math', () => {
  const now = utc(2021, 2, 15, 13, 45, 30, 123); // a Monday
  const at = (text: string, roundUp = false, tz?: string) => parseDateMath(text, dateFormatter(), { now, roundUp, tz }).ms;
  it.each([
    ['now', false, now],
    ['now-1d', false, utc(2021, 2, 14, 13, 45, 30, 123)],
    ['now-1d/d', false, utc(2021, 2, 14)],
    ['now-1d/d', true, utc(2021, 2, 14, 23, 59, 59, 999)],
    ['now/M', false, utc(2021, 2, 1)],
    ['now/y', true, utc(2021, 11, 31, 23, 59, 59, 999)],
    ['now/w', false, utc(2021, 2, 15)],
    ['now+1h/h', false, utc(2021, 2, 15, 14)],
    ['now-2M', false, utc(2021, 0, 15, 13, 45, 30, 123)],
    ['2021-01-31||+1M', false, utc(2021, 1, 28)],
    ['2021-01-31||+1M/d', true, utc(2021, 1, 28, 23, 59, 59, 999)],
  ])('evaluates %s (roundUp %s)', (text, roundUp, ms) => {
    expect(at(text, roundUp)).toBe(ms);
  });

  it('rounds in a time zone', () => {
    expect(at('now/d', false, '+02:00')).toBe(utc(2021, 2, 14, 22));
    expect(at('now/d', false, 'Europe/Paris')).toBe(utc(2021, 2, 14, 23));
  });

  it('rejects bad math', () => {
    expect(() => at('now-1x')).toThrow('failed to parse date field [now-1x]');
  });
});

describe('standard analyzer', () => {
  it.each([
    ['The QUICK brown-fox', ['the', 'quick', 'brown', 'fox']],
    ["don't stop, O'Neil", ["don't", 'stop', "o'neil"]],
    ['3.14 and 1,000 or U.S.A.', ['3.14', 'and', '1,000', 'or', 'u.s.a']],
    ['snake_case words', ['snake_case', 'words']],
    ['東京 tower', ['東', '京', 'tower']],
    ['Ünïcödé Straße', ['ünïcödé', 'straße']],
    ['  ...  ', []],
  ])('tokenizes %j', (text, tokens) => {
    expect(analyze(text)).toEqual(tokens);
  });
});
