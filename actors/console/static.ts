import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { EsError } from '../wire/esErrors';
import type { Router } from '../edge/router';
import type { EsResponse, Handler } from '../wire/rest';

/** Where the page's files live: plain ES modules and CSS, served as they are (no build step). */
export const STATIC_DIR = fileURLToPath(new URL('./static/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * Headers of every console response. The page runs only its own scripts and styles (no inline code,
 * no CDN), talks only to this origin, cannot be framed, and sends no referrer.
 */
export const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

const SAFE_NAME = /^[a-z0-9][a-z0-9-]*\.(?:js|css|svg)$/;

/** The files the console may serve: fixed when the node starts, so no request can name another. */
export function staticFiles(dir = STATIC_DIR): Map<string, string> {
  const files = new Map<string, string>();
  for (const name of readdirSync(dir)) if (SAFE_NAME.test(name)) files.set(name, join(dir, name));
  return files;
}

async function serve(path: string): Promise<EsResponse> {
  const bytes = await readFile(path);
  return {
    status: 200,
    headers: { ...SECURITY_HEADERS, 'content-type': TYPES[extname(path)], 'content-length': String(bytes.length), 'cache-control': 'no-cache' },
    body: Readable.from([bytes]),
  };
}

/**
 * Adds a GET route that skips authentication: the page and its code hold no data (everything is
 * fetched afterwards with the user's credentials), and a browser navigation cannot carry an
 * Authorization header. Router.add has no option for it, so the route is looked up and marked.
 */
export function addPublic(r: Router, pattern: string, handler: Handler): void {
  r.add('GET', pattern, handler, { kind: 'none' });
  const m = r.match('GET', pattern);
  if (m.kind !== 'found' || m.route.handler !== handler) throw new Error(`console: route ${pattern} is shadowed`);
  m.route.anonymous = true;
}

/** `GET /_console` (the page) and `GET /_console/static/<file>` (its modules, styles, icon). */
export function staticRoutes(r: Router, dir = STATIC_DIR): void {
  const files = staticFiles(dir);
  const index = join(dir, 'index.html');
  addPublic(r, '/_console', () => serve(index));
  addPublic(r, '/_console/static/{file}', (req) => {
    const path = files.get(req.params.file);
    if (!path) throw new EsError('resource_not_found_exception', 404, `no console file [${req.params.file.slice(0, 100)}]`);
    return serve(path);
  });
}
