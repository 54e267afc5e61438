import type { DocValuesReader, FieldType } from '../types';
import type { SingleBucketPartial } from './aggPartials';
import type { AggregationType, Aggregators, NestedDocs } from './aggTypes';
import { mergeSingle, renderSingle } from './filters';

/**
 * `nested` and `reverse_nested` (ES's NestedAggregator / ReverseNestedAggregator): `nested` feeds
 * its sub-aggregations the nested docs of `path` under each parent it collects (doc_count: those
 * nested docs); `reverse_nested`, inside it, goes back to their parents, each counted once per
 * bucket. The nested docs come from the query phase's hooks (one segment at a time).
 */

/** A reader whose docs are those of the segment's nested docs being walked now. */
class Delegate implements DocValuesReader {
  cur: DocValuesReader | undefined;
  /** Field types come from the index's mapping (the same for parent and nested docs). */
  constructor(private readonly types: DocValuesReader) {}
  fieldType(field: string): FieldType | undefined {
    return this.types.fieldType(field);
  }
  values(field: string, doc: number) {
    return this.cur ? this.cur.values(field, doc) : [];
  }
}

/** The nested walk in progress (nested aggregations nest, so a stack): reverse_nested reads its top. */
const walks: Array<{ docs: NestedDocs; parentReader: DocValuesReader }> = [];

export const nestedAgg: AggregationType = {
  params: ['path'],
  factory(spec, ctx) {
    const path = String(spec.params.path ?? '');
    const reader = new Delegate(ctx.reader);
    const subs = ctx.subsOver ? ctx.subsOver(spec.subs, reader) : ctx.subs(spec.subs);
    return () => {
      let count = 0;
      let sub: Aggregators | undefined;
      return {
        collect(parent: number) {
          const docs = ctx.hooks?.nested?.(path);
          if (!docs) return;
          const [from, to] = docs.childrenOf(parent);
          if (from === to) return;
          reader.cur = docs.reader;
          walks.push({ docs, parentReader: ctx.reader });
          try {
            for (let c = from; c < to; c++) {
              count++;
              (sub ??= subs()).collect(c);
            }
          } finally {
            walks.pop();
          }
        },
        partial: (): SingleBucketPartial => ({ t: 'single', count, subs: (sub ?? subs()).partial() }),
      };
    };
  },
  merge: mergeSingle,
  render: renderSingle,
};

export const reverseNestedAgg: AggregationType = {
  params: ['path'],
  factory(spec, ctx) {
    const reader = new Delegate(ctx.reader);
    const subs = ctx.subsOver ? ctx.subsOver(spec.subs, reader) : ctx.subs(spec.subs);
    return () => {
      let count = 0;
      let sub: Aggregators | undefined;
      let seen = new Set<number>();
      let seenDocs: NestedDocs | undefined;
      return {
        collect(child: number) {
          const w = walks[walks.length - 1];
          if (!w) return;
          if (w.docs !== seenDocs) {
            seenDocs = w.docs; // a new segment: its own parent docs
            seen = new Set();
          }
          const parent = w.docs.parentOf(child);
          if (seen.has(parent)) return;
          seen.add(parent);
          count++;
          reader.cur = w.parentReader;
          (sub ??= subs()).collect(parent);
        },
        partial: (): SingleBucketPartial => ({ t: 'single', count, subs: (sub ?? subs()).partial() }),
      };
    };
  },
  merge: mergeSingle,
  render: renderSingle,
};
