import { createServer, type Server } from 'node:net';
import { checkPort, parsePort } from '../../../scripts/cli/portCheck';

describe('checkPort (npm start, before anything is bootstrapped)', () => {
  let srv: Server;
  let port: number;
  beforeAll(async () => {
    srv = createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    port = (srv.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => srv.close(() => r())));

  it('says which port is taken and what to do', async () => {
    expect(await checkPort('127.0.0.1', port)).toBe(
      `port ${port} on 127.0.0.1 is already in use (another node, or \`npm start\` still running?): stop what listens there (\`ss -ltnp 'sport = :${port}'\` shows it), or start this node with another PORT, e.g. PORT=${port + 1} npm start`,
    );
  });

  it('passes a free port and leaves it free', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const free = (probe.address() as { port: number }).port;
    await new Promise<void>((r) => probe.close(() => r()));
    expect(await checkPort('127.0.0.1', free)).toBeUndefined();
    expect(await checkPort('127.0.0.1', free)).toBeUndefined();
  });

  it('says when HOST is not an address of this machine', async () => {
    expect(await checkPort('192.0.2.1', 9200)).toMatch(/^cannot listen on 192\.0\.2\.1:9200: HOST \[192\.0\.2\.1\] is not an address of this machine$/);
  });
});

describe('parsePort', () => {
  it.each([
    [undefined, 9200],
    ['', 9200],
    ['0', 0],
    ['19200', 19200],
    ['65536', 'PORT [65536] is not a port number (0-65535)'],
    ['92OO', 'PORT [92OO] is not a port number (0-65535)'],
  ])('%j -> %j', (text, out) => expect(parsePort(text)).toBe(out));
});
