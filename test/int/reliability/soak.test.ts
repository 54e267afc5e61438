/**
 * Issue 21 item 3, bounded: the soak of `npm run soak` (scripts/soakLoad.ts: writes, bulks,
 * searches, scrolls, PITs, API keys and tokens through every node) for a short while on one node
 * and on a 3-node cluster (3 nats-servers, R3 streams): no log follower stalls, no 5xx, no request
 * left unanswered. `npm run soak -- [--nodes 3] --minutes 5` is the long run.
 */
import { formatSoak, runSoak } from '../../../scripts/soakLoad';
import { ELASTIC_PASSWORD, startTestNode, type TestNode } from '../../support/node';
import { CLUSTER_PASSWORD, startTestCluster, type TestCluster } from '../../support/cluster';

jest.setTimeout(180_000);

const basic = (pw: string) => `Basic ${Buffer.from(`elastic:${pw}`).toString('base64')}`;
const SECONDS = Number(process.env.SOAK_SECONDS ?? 20);

describe('one node', () => {
  let t: TestNode;
  beforeAll(async () => {
    t = await startTestNode({ security: true });
  });
  afterAll(() => t.stop());

  it(`soaks ${SECONDS} s of mixed traffic with no follower stall and no 5xx`, async () => {
    const r = await runSoak({ urls: [t.url], auth: basic(ELASTIC_PASSWORD), seconds: SECONDS, concurrency: 3, seed: 21 });
    expect({ stalls: r.stalls, failures: r.failures, steps: r.requests > 50 }).toEqual({ stalls: 0, failures: [], steps: true });
    expect([...new Set(r.followers.map((f) => f.stream))].sort()).toEqual(['ES_DATA', 'ES_EVT']);
    if (process.env.SOAK_REPORT) console.log(formatSoak(r));
  });
});

describe('a 3-node cluster', () => {
  let c: TestCluster;
  beforeAll(async () => {
    c = await startTestCluster({ nodes: 3, security: true });
  });
  afterAll(() => c.stop());

  it(`soaks ${SECONDS} s of mixed traffic through every node with no follower stall and no 5xx`, async () => {
    const r = await runSoak({ urls: c.nodes.map((n) => n.url), auth: basic(CLUSTER_PASSWORD), seconds: SECONDS, concurrency: 3, seed: 22 });
    expect({ stalls: r.stalls, failures: r.failures, steps: r.requests > 30 }).toEqual({ stalls: 0, failures: [], steps: true });
    expect(r.followers.filter((f) => f.stream === 'ES_DATA')).toHaveLength(3);
    if (process.env.SOAK_REPORT) console.log(formatSoak(r));
  });
});
