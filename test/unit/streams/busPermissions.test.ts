import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Aggregate, ShardOp, subjects } from '../../../streams/subjects';
import { NODE_SUBJECTS, roleAllows, subjectMatches } from '../../../streams/busPermissions';

/** Builds a subject from a builder of subjects.ts with sample arguments of the right kinds. */
function sample(name: string, build: unknown): string {
  if (typeof build === 'string') return build;
  const f = build as (...a: unknown[]) => string;
  // Parameter names tell the kind of each argument.
  const params = /^[^(]*\(([^)]*)\)/.exec(f.toString())?.[1].split(',').map((p) => p.trim()).filter(Boolean) ?? [];
  const args = params.map((p) => {
    if (/^a\b|aggregate/i.test(p)) return Aggregate.Scroll;
    if (/^n\b|^n$/.test(p)) return 0;
    if (/op$/i.test(p)) return ShardOp.Query;
    if (/what/.test(p)) return 'heartbeat';
    return `${name}-${p}`.replace(/[^A-Za-z0-9_-]/g, '');
  });
  return f(...args);
}

describe('bus permissions (streams/busPermissions.ts)', () => {
  it('matches NATS wildcards token by token', () => {
    expect(subjectMatches('es.v1.evt.>', 'es.v1.evt.scroll.x.opened')).toBe(true);
    expect(subjectMatches('es.v1.evt.>', 'es.v1.evt')).toBe(false);
    expect(subjectMatches('es.v1.*.x', 'es.v1.evt.x')).toBe(true);
    expect(subjectMatches('es.v1.*.x', 'es.v1.evt.x.y')).toBe(false);
    expect(subjectMatches('$JS.API.INFO', '$JS.API.INFO')).toBe(true);
  });

  // A builder whose subject the node role does not cover would be refused by every secured server.
  it.each(Object.entries(subjects).filter(([k]) => !k.endsWith('Queue')))('the node role covers subjects.%s', (name, build) => {
    const s = sample(name, build);
    expect(roleAllows('node', 'publish', s)).toBe(true);
    expect(roleAllows('node', 'subscribe', s)).toBe(true);
  });

  it('every es.v1 subject family written anywhere in the sources is covered', () => {
    // Subjects built outside subjects.ts (a template string in some actor) would escape the test above.
    const root = resolve(__dirname, '../../..');
    const files: string[] = [];
    const walk = (d: string) => {
      for (const f of readdirSync(d)) {
        const p = join(d, f);
        if (statSync(p).isDirectory()) walk(p);
        else if (/\.(ts|mjs)$/.test(f)) files.push(p);
      }
    };
    for (const d of ['actors', 'streams', 'machines', 'scripts']) walk(join(root, d));
    const families = new Set(files.flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/es\.v1\.([a-z]+)[.'`]/g)].map((m) => m[1])));
    expect(families.size).toBeGreaterThan(5);
    const uncovered = [...families].filter((f) => !NODE_SUBJECTS.some((p) => subjectMatches(p, `es.v1.${f}.x`)));
    expect(uncovered).toEqual([]);
  });

  it('the subscriber publishes nothing under es.v1 and reads only lifecycle facts', () => {
    for (const [name, build] of Object.entries(subjects).filter(([k]) => !k.endsWith('Queue'))) {
      const s = sample(name, build);
      expect(roleAllows('subscriber', 'publish', s)).toBe(false);
      expect(roleAllows('subscriber', 'subscribe', s)).toBe(s.startsWith('es.v1.evt.'));
    }
    for (const s of ['$JS.API.STREAM.PURGE.ES_EVT', '$JS.API.STREAM.DELETE.ES_EVT', '$JS.API.STREAM.UPDATE.ES_EVT', '$JS.API.STREAM.INFO.ES_DATA',
      '$JS.API.CONSUMER.CREATE.ES_DATA', '$JS.API.STREAM.INFO.KV_ES_CLUSTER', '$JS.API.DIRECT.GET.KV_ES_CLUSTER.$KV.ES_CLUSTER.idkeys', '$KV.ES_CLUSTER.idkeys', '$KV.ES_CLUSTER.idkey.1', '$JS.API.CONSUMER.CREATE.KV_ES_CLUSTER',
      '$JS.API.STREAM.MSG.GET.ES_STATE', '$JS.API.CONSUMER.CREATE.ES_STATE']) {
      expect(roleAllows('subscriber', 'publish', s)).toBe(false);
    }
    // A node's replies and push deliveries go to _INBOX.: the subscriber may not listen there.
    expect(roleAllows('subscriber', 'subscribe', '_INBOX.abc.1')).toBe(false);
    expect(roleAllows('subscriber', 'subscribe', '_INBOX_es_sub.abc')).toBe(true);
  });
});
