/**
 * Parses ES's `name:hash` files (`users`: `username:hash`; `service_tokens`:
 * `namespace/service/token:hash`): one entry a line, `#` comments and blank lines skipped, the
 * name up to the first `:`.
 */
export function parseNameHashFile(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const i = line.indexOf(':');
    if (i > 0) out.set(line.slice(0, i), line.slice(i + 1));
  }
  return out;
}
