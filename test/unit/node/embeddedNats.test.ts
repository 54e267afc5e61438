import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureNatsServer, findNatsServer, SBIN_DIRS } from '../../../actors/embeddedNats';

describe('finding nats-server', () => {
  let dir: string;
  let sbin: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'natsbin-'));
    sbin = join(dir, 'sbin');
    await mkdir(sbin);
    await writeFile(join(sbin, 'nats-server'), '#!/bin/sh\n');
    await chmod(join(sbin, 'nats-server'), 0o755);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('looks in /usr/sbin and /usr/local/sbin besides PATH (Debian installs it in /usr/sbin)', () => {
    expect(SBIN_DIRS).toEqual(expect.arrayContaining(['/usr/sbin', '/usr/local/sbin']));
  });

  it('finds the binary in an sbin folder that is not on PATH', () => {
    expect(findNatsServer({ PATH: '/nonexistent' }, [sbin])).toBe(join(sbin, 'nats-server'));
    expect(ensureNatsServer(undefined, { env: { PATH: '/nonexistent' }, extraDirs: [sbin], uid: 1000 })).toBe(join(sbin, 'nats-server'));
  });

  it('prefers PATH, and skips a file that is not executable', async () => {
    const other = join(dir, 'bin');
    await mkdir(other);
    await writeFile(join(other, 'nats-server'), 'not executable');
    expect(findNatsServer({ PATH: other }, [sbin])).toBe(join(sbin, 'nats-server'));
    await chmod(join(other, 'nats-server'), 0o755);
    expect(findNatsServer({ PATH: other }, [sbin])).toBe(join(other, 'nats-server'));
  });

  it('tells an ordinary user to install it with sudo, and never runs apt-get', () => {
    const apt = jest.fn(() => 0);
    expect(() => ensureNatsServer(undefined, { env: { PATH: '' }, extraDirs: [join(dir, 'none')], uid: 1000, apt })).toThrow(
      /^nats-server is not installed \(looked on PATH and in .*none\): install it with `sudo apt-get install -y nats-server`, or set NATS_URL/,
    );
    expect(apt).not.toHaveBeenCalled();
  });

  it('as root installs it with apt-get, and says so without sudo when that fails', () => {
    const apt = jest.fn(() => 100);
    expect(() => ensureNatsServer(undefined, { env: { PATH: '' }, extraDirs: [join(dir, 'none')], uid: 0, apt })).toThrow(
      /`apt-get install -y nats-server` failed \(see its output above\): install it yourself, or set NATS_URL/,
    );
    expect(apt.mock.calls.map((c) => (c as unknown as [string[]])[0][0])).toEqual(['install', 'update', 'install']);
    const msg = (() => {
      try {
        ensureNatsServer(undefined, { env: { PATH: '' }, extraDirs: [join(dir, 'none')], uid: 0, apt });
      } catch (e) {
        return (e as Error).message;
      }
    })();
    expect(msg).not.toContain('sudo');
  });

  it('as root finds what apt-get installed', () => {
    const apt = jest.fn(() => 0);
    let dirs = [join(dir, 'none')];
    apt.mockImplementation(() => {
      dirs.push(sbin);
      return 0;
    });
    expect(ensureNatsServer(undefined, { env: { PATH: '' }, extraDirs: dirs, uid: 0, apt })).toBe(join(sbin, 'nats-server'));
    dirs = [];
  });
});
