/**
 * Fail-closed credentials on a partition (ours; README "Differences"). A node cut off from NATS cannot
 * know of an invalidation made through another node. ES-like by default (`fail_open`), it waits a
 * bounded time for the log, then answers from what it knew. `xpack.security.authc.partition_policy:
 * fail_closed` (dynamic) refuses instead, with a 503 (clients retry another node), every request
 * whose credential it cannot confirm from the log within that wait. Once the node has read the log's
 * end again it appends one `partition.refused` fact counting what it refused meanwhile.
 */
import { makeEnvelope, Aggregate } from '../../streams';
import type { NodeContext } from '../nodeContext';
import { EsError, illegalArgument } from '../wire/esErrors';
import type { FactLog } from './factLog';

export const PARTITION_POLICY_SETTING = 'xpack.security.authc.partition_policy';
export type PartitionPolicyValue = 'fail_open' | 'fail_closed';

/** The setting's value, or ES's 400 / start-up error text for anything else. */
export function partitionPolicyOf(v: unknown): PartitionPolicyValue {
  if (v === 'fail_open' || v === 'fail_closed') return v;
  throw illegalArgument(`Failed to parse value [${String(v)}] for setting [${PARTITION_POLICY_SETTING}], must be one of [fail_open, fail_closed]`);
}

/** The 503 of a credential the node cannot confirm. */
export const unconfirmedCredentials = (waitMs: number) =>
  new EsError(
    'security_exception',
    503,
    `unable to authenticate: this node cannot confirm the state of credentials from the security log within [${waitMs}ms] (it is cut off from the cluster's NATS) and [${PARTITION_POLICY_SETTING}] is [fail_closed]`,
  );

/** Applies the policy after the gate's bounded wait; counts refusals and logs them once back. */
export class PartitionPolicy {
  private refused = 0;
  private firstAt = 0;
  private lastAt = 0;

  constructor(
    private readonly ctx: NodeContext,
    private readonly facts: FactLog,
    readonly waitMs = 1_000,
  ) {
    partitionPolicyOf(this.policy()); // a bad value stops the start
    facts.onFreshAgain = () => void this.report();
  }

  policy(): PartitionPolicyValue {
    return this.ctx.settings.str(PARTITION_POLICY_SETTING, 'fail_open') as PartitionPolicyValue;
  }

  /** After waiting for the log: throws the 503 when fail_closed and the node still cannot confirm. */
  check(): void {
    if (!this.facts.isStale || this.policy() !== 'fail_closed') return;
    const now = Date.now();
    if (!this.refused++) this.firstAt = now;
    this.lastAt = now;
    throw unconfirmedCredentials(this.waitMs);
  }

  /** Back on the log: one `partition.refused` fact (`es.v1.evt.partition.<nodeId>.refused`) when anything was refused. */
  private async report(): Promise<void> {
    if (!this.refused) return;
    const data = { policy: 'fail_closed' as const, refused: this.refused, first: this.firstAt, last: this.lastAt };
    this.refused = 0;
    const node = this.ctx.node.id;
    try {
      await this.ctx.bus.append(makeEnvelope({ type: 'partition.refused', aggregateId: node, seq: Date.now(), data, node }));
    } catch (e) {
      this.ctx.log.warn({ err: (e as Error).message, ...data }, 'partition.refused fact not appended');
    }
  }
}
