/** A small generated corpus of books plus JS re-implementations of the queries the tests send. */
import { rng } from '../../support/rng';

export interface Book {
  id: number;
  title: string;
  tag?: string;
  year?: number;
  price: number;
  published?: string; // yyyy-MM-dd
  in_stock: boolean;
}

const WORDS = ['quick', 'brown', 'fox', 'lazy', 'dog', 'river', 'stone', 'night', 'garden', 'winter', 'silver', 'ocean'];
const TAGS = ['alpha', 'beta', 'delta', 'gamma', 'omega'];

export const BOOK_MAPPINGS = {
  properties: {
    id: { type: 'long' },
    title: { type: 'text' },
    tag: { type: 'keyword' },
    year: { type: 'long' },
    price: { type: 'double' },
    published: { type: 'date' },
    in_stock: { type: 'boolean' },
  },
} as const;

/** `n` books; every 7th lacks `tag`, every 5th lacks `year`, every 6th lacks `published`. */
export function books(n: number, seed = 42): Book[] {
  const r = rng(seed);
  const out: Book[] = [];
  for (let id = 1; id <= n; id++) {
    const words = Array.from({ length: 2 + Math.floor(r() * 3) }, () => WORDS[Math.floor(r() * WORDS.length)]);
    const b: Book = {
      id,
      title: words.map((w, i) => (i === 0 ? w[0].toUpperCase() + w.slice(1) : w)).join(' '),
      price: Math.round(r() * 10000) / 100,
      in_stock: r() < 0.5,
    };
    if (id % 7 !== 0) b.tag = TAGS[Math.floor(r() * TAGS.length)];
    if (id % 5 !== 0) b.year = 1990 + Math.floor(r() * 35);
    if (id % 6 !== 0) {
      const m = 1 + Math.floor(r() * 12);
      const d = 1 + Math.floor(r() * 28);
      b.published = `${2015 + Math.floor(r() * 10)}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
    }
    out.push(b);
  }
  return out;
}

/** Standard-analyzer-ish tokens for the ASCII titles above. */
export const tokens = (s: string) => s.toLowerCase().split(/[^a-z0-9]+/).filter(Boolean);

export const idsOf = (bs: Book[]) => bs.map((b) => String(b.id));
export const sortedIds = (bs: Book[]) => bs.map((b) => b.id).sort((a, b) => a - b).map(String);
