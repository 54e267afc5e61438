import type { IncomingHttpHeaders } from 'node:http';
import { parseBody } from '../wire/json';
import type { Authz, EsRequest, Handler, Routes } from '../wire/rest';

export interface Route {
  method: string;
  pattern: string;
  segments: string[];
  handler: Handler;
  authz: Authz;
  /** Anonymous routes skip authentication entirely (none in ES by default; kept for completeness). */
  anonymous?: boolean;
}

export type Match =
  | { kind: 'found'; route: Route; params: Record<string, string> }
  | { kind: 'method'; allowed: string[] }
  | { kind: 'none' };

const isParam = (s: string) => s.startsWith('{') && s.endsWith('}');

/** Path router with ES's precedence: a literal segment beats a parameter at the same position. */
export class Router implements Routes {
  private readonly routes: Route[] = [];

  add(methods: string | string[], pattern: string, handler: Handler, authz: Authz = { kind: 'none' }): this {
    const segments = pattern.split('/').filter(Boolean);
    for (const method of Array.isArray(methods) ? methods : [methods]) {
      this.routes.push({ method, pattern, segments, handler, authz });
    }
    // Most specific first: compare literal-ness segment by segment.
    this.routes.sort((a, b) => specificity(b) - specificity(a) || 0);
    return this;
  }

  match(method: string, path: string): Match {
    const parts = path.split('/').filter(Boolean).map(safeDecode);
    // Like ES's path trie, a method mismatch is judged against the most specific pattern only.
    let best: string | undefined;
    const allowed = new Set<string>();
    for (const r of this.routes) {
      const params = matchSegments(r.segments, parts);
      if (!params) continue;
      if (r.method === method || (method === 'HEAD' && r.method === 'GET' && !this.hasExact('HEAD', r.pattern))) {
        return { kind: 'found', route: r, params };
      }
      best ??= r.pattern;
      if (r.pattern === best) allowed.add(r.method);
    }
    return allowed.size ? { kind: 'method', allowed: [...allowed] } : { kind: 'none' };
  }

  private hasExact(method: string, pattern: string) {
    return this.routes.some((r) => r.method === method && r.pattern === pattern);
  }
}

function specificity(r: Route): number {
  // Earlier literal segments weigh more; longer patterns are not preferred by themselves.
  let s = 0;
  r.segments.forEach((seg, i) => {
    if (!isParam(seg)) s += 1 << (16 - Math.min(i, 15));
  });
  return s;
}

function matchSegments(pattern: string[], parts: string[]): Record<string, string> | undefined {
  if (pattern.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i];
    if (isParam(p)) {
      // A first segment starting with `_` names an API, never an index (`/_msearch` is not an index
      // called `_msearch`): an unknown one gets ES's 400/405, not index_not_found. `_all` is the
      // only underscore name that stands for indices.
      if (i === 0 && parts[i].startsWith('_') && parts[i] !== '_all') return undefined;
      params[p.slice(1, -1)] = parts[i];
    } else if (p !== parts[i]) return undefined;
  }
  return params;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Builds the EsRequest object given by the HTTP edge. */
export function makeRequest(init: {
  method: string;
  path: string;
  uri: string;
  params: Record<string, string>;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  body: Buffer | undefined;
}): EsRequest {
  let parsed: { v: unknown } | undefined;
  const opaque = init.headers['x-opaque-id'];
  return {
    ...init,
    opaqueId: Array.isArray(opaque) ? opaque[0] : opaque,
    json<T>() {
      if (!parsed) {
        const text = init.body && init.body.length ? init.body.toString('utf8') : '';
        parsed = { v: text.trim() ? parseBody(text) : undefined };
      }
      return parsed.v as T | undefined;
    },
  };
}
