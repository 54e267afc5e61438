/**
 * The regex-free parse of `yyyy-MM-ddTHH:mm:ss[.f]Z` (every date indexed) against the regex path:
 * the same text with `+00:00` for `Z` takes the regex and must give the same instant or error.
 */
import { dateFormatter } from '../../../../../actors/shard/engine';
import { rng } from '../../../../support/rng';

const outcome = (f: () => unknown) => {
  try {
    return { value: f() };
  } catch (e) {
    return { error: (e as Error).message.replace('+00:00', 'Z') };
  }
};

describe('ISO dates without the regex', () => {
  it('parse as the regex path does, valid or not, rounding up or not', () => {
    const digits = '0123456789';
    for (const format of ['strict_date_optional_time', 'date_optional_time', 'strict_date_optional_time_nanos', 'strict_date_optional_time||epoch_millis']) {
      const f = dateFormatter(format);
      for (let seed = 1; seed <= 1500; seed++) {
        const r = rng(seed);
        const d = (n: number) => Array.from({ length: n }, () => (r() < 0.03 ? 'x' : digits[Math.floor(r() * (r() < 0.5 ? 3 : 10))])).join('');
        let s = `${d(4)}-${d(2)}-${d(2)}T${d(2)}:${d(2)}:${d(2)}`;
        const k = r();
        if (k < 0.6) s += `.${d(1 + Math.floor(r() * 10))}`;
        else if (k < 0.65) s += '.';
        s += 'Z';
        const roundUp = r() < 0.3;
        const viaRegex = s.replace(/Z$/, '+00:00');
        expect({ s, ...outcome(() => f.parse(s, roundUp)) }).toEqual({ s, ...outcome(() => f.parse(viaRegex, roundUp)) });
      }
    }
  });
});
