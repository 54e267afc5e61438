import type { Settings } from '../config';
import { parseTimeValue } from '../wire/timeValue';

/**
 * `events.retention` (an ES time value: `5s`, `7d`): how long a lifecycle fact stays in ES_EVT once
 * compacted (actors/compaction/compactor.ts). Unset or 0 keeps every fact. `events.retention_ms`
 * (milliseconds, earlier builds) is read as an alias; both set to different values stop the start.
 */
export function eventsRetentionMs(s: Settings): number {
  const raw = s.get<unknown>('events.retention', undefined);
  const ms = s.get<unknown>('events.retention_ms', undefined);
  const fromTime = raw === undefined || raw === null || raw === '' ? undefined : parseTimeValue(raw, 'events.retention');
  const fromMs = ms === undefined || ms === null || ms === '' ? undefined : Number(ms);
  if (fromTime !== undefined && fromMs !== undefined && fromTime !== fromMs) {
    throw new Error(`settings [events.retention] (${String(raw)}) and [events.retention_ms] (${String(ms)}) disagree: set only [events.retention]`);
  }
  const v = fromTime ?? fromMs ?? 0;
  return v > 0 ? v : 0;
}
