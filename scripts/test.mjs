// Runs jest (all three projects unless told otherwise) and prints the closing line CI reads:
// "N passed, M failed". Exits non-zero on any failure or when no test ran.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'jest-out-'));
const out = join(dir, 'results.json');
const args = ['jest', '--json', `--outputFile=${out}`, ...process.argv.slice(2)];
const r = spawnSync('npx', args, { stdio: 'inherit', env: { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --max-old-space-size=4096`.trim() } });
let passed = 0;
let failed = 0;
try {
  const res = JSON.parse(readFileSync(out, 'utf8'));
  passed = res.numPassedTests;
  failed = res.numFailedTests + (res.numRuntimeErrorTestSuites ?? 0);
} catch {
  failed = failed || 1;
}
rmSync(dir, { recursive: true, force: true });
console.log(`${passed} passed, ${failed} failed`);
process.exit(r.status !== 0 || failed > 0 || passed === 0 ? 1 : 0);
