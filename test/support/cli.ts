import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Env for a CLI child: no inherited NATS_URL/DATA_DIR unless given. */
function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env };
  delete base.NATS_URL;
  delete base.DATA_DIR;
  return { ...base, ...env };
}

/** Starts `scripts/<script>.ts` under tsx (as `npm run <script>` does, without npm's start-up cost). */
export function spawnCli(script: string, args: string[], env: Record<string, string | undefined> = {}): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', `scripts/${script}.ts`, ...args], { cwd: ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Runs a CLI to completion. */
export function runCli(script: string, args: string[], env: Record<string, string | undefined> = {}, timeoutMs = 60_000): Promise<CliResult> {
  return new Promise((res, rej) => {
    const p = spawnCli(script, args, env);
    let stdout = '';
    let stderr = '';
    p.stdout!.on('data', (d) => (stdout += d));
    p.stderr!.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      p.kill('SIGKILL');
      rej(new Error(`${script} ${args.join(' ')} timed out; stderr: ${stderr}`));
    }, timeoutMs);
    p.on('close', (code) => {
      clearTimeout(timer);
      res({ code, stdout, stderr });
    });
  });
}

/** Resolves with the first line of `stream` that `match` accepts. */
export function waitForLine(p: ChildProcess, stream: 'stdout' | 'stderr', match: (line: string) => boolean, timeoutMs = 20_000): Promise<string> {
  return new Promise((res, rej) => {
    let buf = '';
    const s = p[stream]!;
    const timer = setTimeout(() => {
      s.off('data', onData);
      rej(new Error(`no matching ${stream} line in ${timeoutMs} ms; got: ${buf.slice(-2000)}`));
    }, timeoutMs);
    const onData = (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      for (const l of lines.slice(0, -1)) {
        if (match(l)) {
          clearTimeout(timer);
          s.off('data', onData);
          res(l);
          return;
        }
      }
    };
    s.on('data', onData);
  });
}
