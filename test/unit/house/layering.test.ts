/**
 * The layering check (.dependency-cruiser.cjs, README "Architecture"): the tree passes it, and it
 * fails an upward import, a circle of type-only imports and a file outside every room, while a
 * new subfolder of the engine needs no change to it.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const ROOT = join(__dirname, '../../..');
const CLI = join(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
  cycle?: { name: string }[];
}

/** Runs the check over `paths` of `cwd`; its violations. */
function cruise(cwd: string, paths: string[]): Violation[] {
  const r = spawnSync(process.execPath, [CLI, '--config', CONFIG, '--output-type', 'json', ...paths], { cwd, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (!r.stdout) throw new Error(`dependency-cruiser did not run: ${r.stderr}`);
  return (JSON.parse(r.stdout) as { summary: { violations: Violation[] } }).summary.violations;
}

const show = (vs: Violation[]) => vs.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}${v.cycle ? ` (${v.cycle.map((c) => c.name).join(' -> ')})` : ''}`);

/** A throwaway tree of the project's shape: `{ path: source }`. */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'layering-'));
  for (const [p, src] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, p)), { recursive: true });
    writeFileSync(join(dir, p), src);
  }
  return dir;
}

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const fixture = (files: Record<string, string>) => {
  const d = tree(files);
  dirs.push(d);
  return d;
};

it('finds no upward import, no circle and no unplaced file in the tree', () => {
  expect(show(cruise(ROOT, ['actors', 'machines', 'streams', 'scripts']))).toEqual([]);
});

it('fails a room importing a room above it (the ground floor importing the edge)', () => {
  const d = fixture({
    'actors/edge/router.ts': 'export const route = 1;\n',
    'actors/wire/json.ts': "import { route } from '../edge/router';\nexport const json = route;\n",
  });
  expect(show(cruise(d, ['actors']))).toEqual(['wire-not-upward: actors/wire/json.ts -> actors/edge/router.ts']);
});

it('fails the search service importing a route, and a machine importing the security room', () => {
  const d = fixture({
    'actors/edge/routes/search.ts': 'export const r = 1;\n',
    'actors/search/searchService.ts': "import { r } from '../edge/routes/search';\nexport const s = r;\n",
    'actors/security/types.ts': 'export interface RoleDescriptor { cluster: string[] }\n',
    'machines/apiKey.machine.ts': "import type { RoleDescriptor } from '../actors/security/types';\nexport type K = RoleDescriptor;\n",
  });
  expect(show(cruise(d, ['actors', 'machines'])).sort()).toEqual([
    'machines-not-upward: machines/apiKey.machine.ts -> actors/security/types.ts',
    'machines-pure: machines/apiKey.machine.ts -> actors/security/types.ts',
    'search-not-upward: actors/search/searchService.ts -> actors/edge/routes/search.ts',
  ]);
});

it('fails a circle made of type-only imports', () => {
  const d = fixture({
    'actors/security/appPrivileges.ts': "import type { R } from './roleDescriptor';\nexport interface A { r?: R }\n",
    'actors/security/roleDescriptor.ts': "import type { A } from './appPrivileges';\nexport interface R { a?: A }\n",
  });
  expect(show(cruise(d, ['actors']))).toEqual([
    'no-circular: actors/security/appPrivileges.ts -> actors/security/roleDescriptor.ts (actors/security/roleDescriptor.ts -> actors/security/appPrivileges.ts)',
  ]);
});

it('fails a source file that belongs to no room, and the engine importing the shard actor', () => {
  const d = fixture({
    'actors/shard/shardActor.ts': 'export const a = 1;\n',
    'actors/shard/engine/query/search.ts': "import { a } from '../../shardActor';\nexport const q = a;\n",
    'actors/newThing.ts': "import { json } from './wire/json';\nexport const t = json;\n",
    'actors/wire/json.ts': 'export const json = 1;\n',
  });
  expect(show(cruise(d, ['actors'])).sort()).toEqual([
    'engine-pure: actors/shard/engine/query/search.ts -> actors/shard/shardActor.ts',
    'in-a-room: actors/newThing.ts -> actors/wire/json.ts',
  ]);
});

it('takes new engine subfolders as they come (segments/, index/, …) and downward imports as they are', () => {
  const d = fixture({
    'actors/wire/json.ts': 'export const json = 1;\n',
    'actors/shard/engine/segments/writer.ts': "import { json } from '../../../wire/json';\nexport const w = json;\n",
    'actors/shard/engine/segments/format/header.ts': "import { w } from '../writer';\nexport const h = w;\n",
    'actors/shard/shardActor.ts': "import { h } from './engine/segments/format/header';\nexport const a = h;\n",
    'actors/search/coordinator.ts': "import { a } from '../shard/shardActor';\nexport const c = a;\n",
    'actors/edge/routes/search.ts': "import { c } from '../../search/coordinator';\nexport const r = c;\n",
  });
  expect(show(cruise(d, ['actors']))).toEqual([]);
});
