/**
 * `npm run service-tokens -- create|list|delete <namespace/service> <name>` (`--help` on each): manages file-backed
 * service account tokens in `<configDir>/service_tokens`, like ES's `bin/elasticsearch-service-tokens`.
 * The running node picks changes up without a restart. Config dir: `--config-dir <dir>`, else
 * `ES_PATH_CONF`, else `CONFIG_DIR`, else `./config`.
 */
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { hashSecret, randomUrlSafe } from '../actors/security/hashing';
import { SERVICE_ACCOUNTS } from '../actors/security/serviceAccountDefs';
import { cliArgs, str } from './cli/args';
import { encodeServiceToken, INVALID_TOKEN_NAME_MESSAGE, readServiceTokens, VALID_TOKEN_NAME, writeServiceTokens } from '../actors/security/serviceTokenFile';

const USAGE = `usage: npm run service-tokens -- [--config-dir <dir>] <command>
  create <namespace/service> <name>   create a token and print it (once)
  list [<namespace/service>]          list token names
  delete <namespace/service> <name>   delete a token
  <command> --help                    help of one command
Config dir: --config-dir, else ES_PATH_CONF, else CONFIG_DIR, else ./config. A running node picks changes up.`;
const COMMAND_USAGE: Record<string, string> = {
  create: 'usage: npm run service-tokens -- [--config-dir <dir>] create <namespace/service> <name>\nCreates a file-backed service account token and prints it: it is shown only once.',
  list: 'usage: npm run service-tokens -- [--config-dir <dir>] list [<namespace/service>]\nLists the file-backed service account tokens (names only).',
  delete: 'usage: npm run service-tokens -- [--config-dir <dir>] delete <namespace/service> <name>\nDeletes a file-backed service account token.',
};
/** Positionals each command takes (after its name): [min, max]. */
const ARITY: Record<string, [number, number]> = { create: [2, 2], list: [0, 1], delete: [2, 2] };

/** A command line the CLI does not take (ES's exit code USAGE = 64). */
export class CliError extends Error {}

function account(principal: string | undefined): string {
  if (!principal || !Object.hasOwn(SERVICE_ACCOUNTS, principal)) {
    throw new CliError(`Unknown service account principal: [${principal ?? ''}]. Must be one of [${Object.keys(SERVICE_ACCOUNTS).join(',')}]`);
  }
  return principal;
}

/** Runs one CLI command; returns what it prints (`--help`: the usage). */
export async function serviceTokensCli(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  let parsed;
  try {
    parsed = cliArgs(argv, { options: { 'config-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } }, maxPositionals: 3 });
  } catch (e) {
    throw new CliError(`${(e as Error).message}\n${USAGE}`);
  }
  const [cmd, principal, name, ...extra] = parsed.positionals;
  if (cmd !== undefined && !Object.hasOwn(ARITY, cmd)) throw new CliError(`unknown command [${cmd}]\n${USAGE}`);
  if (parsed.values.help) return `${cmd ? COMMAND_USAGE[cmd] : USAGE}\n`;
  if (cmd === undefined) throw new CliError(`a command is required\n${USAGE}`);
  const n = parsed.positionals.length - 1;
  const [min, max] = ARITY[cmd];
  if (n > max || extra.length) throw new CliError(`unexpected argument [${parsed.positionals[max + 1]}]\n${COMMAND_USAGE[cmd]}`);
  if (n < min) throw new CliError(`missing ${n === 0 ? '<namespace/service>' : '<name>'}\n${COMMAND_USAGE[cmd]}`);
  const configDir = resolve(str(parsed, 'config-dir') ?? env.ES_PATH_CONF ?? env.CONFIG_DIR ?? './config');
  const tokens = await readServiceTokens(configDir);
  switch (cmd) {
    case 'create': {
      const acc = account(principal);
      if (!name || !VALID_TOKEN_NAME.test(name)) throw new CliError(INVALID_TOKEN_NAME_MESSAGE);
      const qualified = `${acc}/${name}`;
      if (tokens.has(qualified)) throw new CliError(`Service token [${qualified}] already exists`);
      const secret = randomUrlSafe(16);
      // PBKDF2_STRETCH, as ES's default service_token_hashing.algorithm (runs on the libuv pool).
      tokens.set(qualified, await hashSecret(secret, 'pbkdf2_stretch'));
      await mkdir(configDir, { recursive: true });
      await writeServiceTokens(configDir, tokens);
      const [namespace, service] = acc.split('/');
      return `SERVICE_TOKEN ${qualified} = ${encodeServiceToken({ namespace, service, name, secret })}\n`;
    }
    case 'list': {
      const prefix = principal ? `${account(principal)}/` : '';
      return [...tokens.keys()].filter((k) => k.startsWith(prefix)).sort().map((k) => `${k}\n`).join('');
    }
    default: {
      const acc = account(principal);
      const qualified = `${acc}/${name ?? ''}`;
      if (!name || !tokens.delete(qualified)) throw new CliError(`Service token [${qualified}] does not exist`);
      await writeServiceTokens(configDir, tokens);
      return '';
    }
  }
}

const isMain = process.argv[1] && /serviceTokens\.(ts|js)$/.test(process.argv[1]);
if (isMain) {
  serviceTokensCli(process.argv.slice(2)).then(
    (out) => process.stdout.write(out),
    (e: unknown) => {
      process.stderr.write(`ERROR: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(e instanceof CliError ? 64 : 1);
    },
  );
}
