import { createServer, type Server, type Socket } from 'node:net';
import { openWire, wireTarget } from '../../../scripts/cli/natsWire';

describe('the replay reader raw NATS connection', () => {
  it('reads host, port and credentials from a plain nats:// URL', () => {
    expect(wireTarget('nats://127.0.0.1:4333')).toEqual({ host: '127.0.0.1', port: 4333 });
    expect(wireTarget('127.0.0.1:4333')).toEqual({ host: '127.0.0.1', port: 4333 });
    expect(wireTarget('nats://u%40x:p%3As@h:1')).toEqual({ host: 'h', port: 1, user: 'u@x', pass: 'p:s' });
    expect(wireTarget('nats://s3cr3t@h')).toEqual({ host: 'h', port: 4222, token: 's3cr3t' });
    expect(wireTarget('nats://[::1]:5')).toEqual({ host: '::1', port: 5 });
  });

  it('refuses what only nats.js can do (TLS, a list of servers), so the worker falls back to it', async () => {
    await expect(openWire('tls://h:4222')).rejects.toThrow('not a plain nats:// URL');
    await expect(openWire('nats://a:4222,nats://b:4222')).rejects.toThrow();
  });

  describe('against a fake server', () => {
    let server: Server;
    let port = 0;
    let info = '{"server_id":"x","headers":true}';
    const sockets: Socket[] = [];
    beforeAll(async () => {
      server = createServer((sock) => {
        sockets.push(sock);
        sock.write(`INFO ${info}\r\n`);
        let subscribed = false;
        sock.on('data', (d) => {
          for (const line of d.toString().split('\r\n')) {
            if (line === 'PING' && !subscribed) sock.write('PONG\r\n');
            if (!line.startsWith('SUB ')) continue;
            subscribed = true;
            // a fact split across two writes, a flow-control request and an idle heartbeat, then
            // the PONG of the subscription's PING (a server never interleaves them)
            const head = 'NATS/1.0\r\nNats-Msg-Id: 1\r\n\r\n';
            const fact = `${head}{"a":"é"}`;
            const msg = Buffer.from(`HMSG in 1 ${Buffer.byteLength(head)} ${Buffer.byteLength(fact)}\r\n${fact}\r\n`);
            sock.write(msg.subarray(0, 30));
            setTimeout(() => {
              sock.write(msg.subarray(30));
              const fc = 'NATS/1.0 100 FlowControl Request\r\n\r\n';
              sock.write(`HMSG in 1 $JS.FC.x.y ${fc.length} ${fc.length}\r\n${fc}\r\n`);
              const hb = 'NATS/1.0 100 Idle Heartbeat\r\n\r\n';
              sock.write(`HMSG in 1 ${hb.length} ${hb.length}\r\n${hb}\r\nPONG\r\n`);
            }, 20);
          }
        });
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      port = (server.address() as { port: number }).port;
    });
    afterAll(() => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((r) => server.close(() => r()));
    });

    it('delivers payloads, flow-control requests and heartbeats apart', async () => {
      const wire = await openWire(`nats://127.0.0.1:${port}`, { timeoutMs: 2_000 });
      const got: Array<[string, number, string | undefined]> = [];
      await wire.subscribe('in', { message: (d, status, reply) => got.push([Buffer.from(d).toString(), status, reply]), error: () => undefined });
      for (let i = 0; i < 100 && got.length < 3; i++) await new Promise((r) => setTimeout(r, 10));
      wire.close();
      expect(got).toEqual([
        ['{"a":"é"}', 0, undefined],
        ['', 100, '$JS.FC.x.y'],
        ['', 100, undefined],
      ]);
    });

    it('refuses a server that asks for TLS', async () => {
      info = '{"server_id":"x","headers":true,"tls_required":true}';
      await expect(openWire(`nats://127.0.0.1:${port}`)).rejects.toThrow('the server requires TLS');
      info = '{"server_id":"x","headers":true}';
    });
  });
});
