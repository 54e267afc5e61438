import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(__dirname, '../../..');
const ignored = (path: string) => spawnSync('git', ['check-ignore', '--no-index', '-q', path], { cwd: ROOT }).status === 0;

describe('.gitignore (issue 10 item 24)', () => {
  it.each([
    'data/snapshots/snapshot-00000000000000000002.snap', // what npm start writes in the clone
    'data/nats/jetstream/jetstream/$G/streams/ES_EVT/msgs/1.blk',
    'data/node.json',
    'events.jsonl', // npm run events -- export --file events.jsonl (facts hold credential hashes)
    'tokens.jsonl',
    'config/service_tokens',
    'config/users',
    'config/users_roles',
  ])('ignores %s', (path) => expect(ignored(path)).toBe(true));

  it.each(['actors/system.ts', 'test/unit/repo/gitignore.test.ts', 'streams/schemas/scroll.schema.json'])('keeps %s', (path) => expect(ignored(path)).toBe(false));
});
