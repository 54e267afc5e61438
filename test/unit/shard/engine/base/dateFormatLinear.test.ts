import { dateFormatter } from '../../../../../actors/shard/engine/base/dates';

describe('custom date formats match in linear time', () => {
  it('refuses a long value for a format of many optional sections at once (a backtracking RegExp took seconds)', () => {
    const f = dateFormatter('[y]'.repeat(12));
    const t0 = Date.now();
    expect(() => f.parse(`${'1'.repeat(108)}x`)).toThrow('failed to parse date field');
    expect(Date.now() - t0).toBeLessThan(1000);
  });

  it('still parses custom formats with literals, fractions and optional sections', () => {
    expect(dateFormatter("dd/MM/yyyy HH:mm:ss.SSS'Z'").parse('03/05/2016 10:11:12.123Z').ms).toBe(Date.UTC(2016, 4, 3, 10, 11, 12, 123));
    expect(dateFormatter('yyyy-MM-dd[ HH:mm]').parse('2016-05-03').ms).toBe(Date.UTC(2016, 4, 3));
    expect(dateFormatter('yyyy-MM-dd[ HH:mm]').parse('2016-05-03 07:08').ms).toBe(Date.UTC(2016, 4, 3, 7, 8));
  });
});
