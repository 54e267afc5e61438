/**
 * `npm run service-tokens -- create|list|delete <namespace/service> <name>`: manages file-backed
 * service account tokens in `<configDir>/service_tokens`, like ES's `bin/elasticsearch-service-tokens`.
 * The running node picks changes up without a restart. Config dir: `--config-dir <dir>`, else
 * `ES_PATH_CONF`, else `CONFIG_DIR`, else `./config`.
 */
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { hashSecret, randomUrlSafe } from '../actors/security/hashing';
import { SERVICE_ACCOUNTS } from '../actors/security/serviceAccountDefs';
import { encodeServiceToken, INVALID_TOKEN_NAME_MESSAGE, readServiceTokens, VALID_TOKEN_NAME, writeServiceTokens } from '../actors/security/serviceTokenFile';

const USAGE = 'usage: service-tokens [--config-dir <dir>] create <namespace/service> <name> | list [<namespace/service>] | delete <namespace/service> <name>';

class CliError extends Error {}

function account(principal: string | undefined): string {
  if (!principal || !Object.hasOwn(SERVICE_ACCOUNTS, principal)) {
    throw new CliError(`Unknown service account principal: [${principal ?? ''}]. Must be one of [${Object.keys(SERVICE_ACCOUNTS).join(',')}]`);
  }
  return principal;
}

/** Runs one CLI command; returns what it prints. */
export async function serviceTokensCli(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const args = [...argv];
  let configDir = env.ES_PATH_CONF ?? env.CONFIG_DIR ?? './config';
  const i = args.indexOf('--config-dir');
  if (i >= 0) {
    configDir = args[i + 1];
    args.splice(i, 2);
  }
  configDir = resolve(configDir);
  const [cmd, principal, name] = args;
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
    case 'delete': {
      const acc = account(principal);
      const qualified = `${acc}/${name ?? ''}`;
      if (!name || !tokens.delete(qualified)) throw new CliError(`Service token [${qualified}] does not exist`);
      await writeServiceTokens(configDir, tokens);
      return '';
    }
    default:
      throw new CliError(USAGE);
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
