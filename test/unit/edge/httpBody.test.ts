/**
 * Compressed bodies (actors/edge/httpBody.ts): a gzip bomb is refused with ES's 413 at the cap, and
 * quickly even while other work keeps the event loop busy (zlib's output comes back to the loop one
 * chunk at a time: with 16 KB chunks a 100 MB bomb took 32 s here with 4 ms of other work per turn).
 */
import { Readable } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { gzipSync } from 'node:zlib';
import { readBody } from '../../../actors/edge/httpBody';

const MAX = 100 * 1024 * 1024;
const request = (body: Buffer, headers: Record<string, string>) => Object.assign(Readable.from([body]), { headers }) as unknown as IncomingMessage;

it('inflates a small gzip body', async () => {
  const json = Buffer.from('{"query":{"match_all":{}}}');
  expect((await readBody(request(gzipSync(json), { 'content-encoding': 'gzip' }), MAX))?.toString()).toBe(json.toString());
});

it('refuses a 120 MB bomb with 413 within 6 s while the event loop is kept busy', async () => {
  const bomb = gzipSync(Buffer.alloc(120 * 1024 * 1024, 0x20), { level: 9 });
  const busy = setInterval(() => {
    const end = Date.now() + 4;
    while (Date.now() < end); // other requests' work
  }, 0);
  const start = Date.now();
  try {
    const err = await readBody(request(bomb, { 'content-encoding': 'gzip', 'content-length': String(bomb.length) }), MAX).then(() => undefined, (e: { status?: number; type?: string }) => e);
    expect([err?.status, err?.type]).toEqual([413, 'content_too_long_exception']);
  } finally {
    clearInterval(busy);
  }
  expect(Date.now() - start).toBeLessThan(6_000);
});
