/**
 * Authenticated vs unauthenticated search rate on two whole nodes (security off / on), load from a
 * child process, interleaved rounds, medians: `node --import tsx scripts/securitySearchBench.ts`
 * (env R = rounds; the order of the credentials alternates per round). The target is ≥ 0.95x; on a shared 2-core machine expect ±20% per round.
 * `npm run bench -- --only security` prints the same figures with the rest of issue 5's.
 */
import { authSearchRates, CREDENTIALS } from './bench/authRates';
import { median, pairedRatio } from './bench/stats';
import { parseOrExit } from './cli/args';

parseOrExit('securitySearchBench', 'usage: node --import tsx scripts/securitySearchBench.ts   (env R = rounds)', process.argv.slice(2));

const { rates: res, cpuUs } = await authSearchRates({ rounds: Number(process.env.R ?? 6), seconds: 3 });
for (const c of CREDENTIALS.slice(1)) {
  console.log(`${c}/open per round: ${res[c].map((x, i) => (x / res.open[i]).toFixed(2)).join(' ')} (median ${pairedRatio(res[c], res.open).toFixed(2)})`);
}
console.log(CREDENTIALS.map((c) => `${c} ${median(res[c]).toFixed(0)} req/s (${(median(res[c]) / median(res.open)).toFixed(2)}x) [${res[c].map((x) => x.toFixed(0)).join(' ')}], node CPU ${median(cpuUs[c]).toFixed(0)} µs/search`).join('\n'));
process.exit(0);
