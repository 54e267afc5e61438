import { subjects } from '../../streams';

/**
 * A subject filter from the command line: a full subject (`es.v1.evt.scroll.*.expired`) is used as
 * is; otherwise it is relative to `es.v1.evt.`: `scroll` -> every scroll fact, `pit.<id>` -> one PIT,
 * `*.*.expired` -> every expiry. No argument -> every fact.
 */
export function subjectFilter(arg?: string): string {
  if (!arg) return subjects.allFacts;
  if (arg.startsWith('es.')) return arg;
  const tokens = arg.split('.');
  return `es.v1.evt.${arg}${tokens.length < 3 && !arg.endsWith('>') ? '.>' : ''}`;
}
