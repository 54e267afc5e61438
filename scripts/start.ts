/**
 * `npm start`: one node on http://127.0.0.1:9200 (HOST, PORT). NATS_URL connects to a running
 * nats-server; without it a local nats-server child is started with JetStream under DATA_DIR.
 *
 * Before anything is started: the arguments, the settings (as ES refuses to start on an unknown
 * setting or a bad value) and the HTTP port are checked. SIGINT/SIGTERM/SIGHUP stop the node in
 * order (snapshot, checkpoints, then the embedded nats-server last); a signal a second or more after
 * the first exits at once.
 */
import pino from 'pino';
import { readNodeSettings } from '../actors/config';
import { startSystem } from '../actors/system';
import { cliArgs, UsageError } from './cli/args';
import { checkPort, parsePort } from './cli/portCheck';
import { startConsole } from '../actors/console';
import { httpSslRefusal } from '../actors/tls/httpSsl';

const USAGE = `usage: npm start [-- --help]
Starts one node. Configured by environment variables (README "Configuration"):
  HOST, PORT (127.0.0.1, 9200), NATS_URL, DATA_DIR (./data), CONFIG (config/node.yml), CONFIG_DIR (./config),
  ELASTIC_PASSWORD, LOG_LEVEL, ES_SETTING_<KEY> (\`.\` as \`_\`, \`_\` as \`__\`: ES_SETTING_SEARCH_MAX__KEEP__ALIVE=1h)`;

/** ES's exit code for a configuration error (ExitCodes.CONFIG). */
const EXIT_CONFIG = 78;

function fail(lines: string[], code: number): never {
  for (const l of lines) process.stderr.write(`error: ${l}\n`);
  process.stderr.write('the node did not start\n');
  process.exit(code);
}

try {
  const { values } = cliArgs(process.argv.slice(2), { options: { help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    process.stdout.write(USAGE + '\n');
    process.exit(0);
  }
} catch (e) {
  if (!(e instanceof UsageError)) throw e;
  process.stderr.write(`start: ${e.message}\n${USAGE}\n`);
  process.exit(64);
}

const log = pino({ level: process.env.LOG_LEVEL ?? 'info' });
const { settings, errors, warnings } = readNodeSettings();
for (const w of warnings) log.warn(w);
const host = process.env.HOST || '127.0.0.1';
const port = parsePort(process.env.PORT);
if (typeof port === 'string') errors.push(port);
// ES refuses to start on a TLS setup it cannot use; here also plain HTTP on a non-loopback HOST.
const refusal = errors.length ? undefined : httpSslRefusal(settings, host);
if (refusal) errors.push(refusal);
if (errors.length) fail(errors, EXIT_CONFIG);
const taken = await checkPort(host, port as number);
if (taken) fail([taken], 1);

const sys = await startSystem({ settings, log, host, port: port as number, extensions: [startConsole] }).catch((e: Error) => fail([e.message], 1));
if (sys.tls) {
  // As ES 8 prints at its first start: how to trust the node's CA.
  const lines = [
    '',
    `HTTPS is on: ${sys.url}`,
    `HTTP CA certificate SHA-256 fingerprint:`,
    `  ${sys.tls.fingerprint}`,
    ...(sys.tls.caFile ? [`  curl --cacert ${sys.tls.caFile} -u elastic ${sys.url}/`] : []),
    `  official client: new Client({ node: '${sys.url}', caFingerprint: '${sys.tls.fingerprint}', tls: { rejectUnauthorized: false }, auth: { ... } })`,
    '',
  ];
  process.stdout.write(lines.join('\n') + '\n');
}

let stoppingSince: number | undefined;
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(sig, () => {
    if (stoppingSince !== undefined) {
      // Ctrl-C reaches the node twice (from the terminal, and relayed by tsx): only a later one forces.
      if (Date.now() - stoppingSince < 1_000) return;
      log.warn({ sig }, 'second signal: exiting without finishing the shutdown');
      process.exit(130);
    }
    stoppingSince = Date.now();
    log.info({ sig }, 'shutting down');
    // A stop that hangs (NATS gone) must not keep the process forever.
    setTimeout(() => {
      log.error('shutdown did not finish in 60 s: exiting');
      process.exit(1);
    }, 60_000).unref();
    void sys.stop().then(() => {
      log.info('stopped');
      process.exit(0);
    });
  });
}
