import { createHash } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Small state files of the node (context and credential checkpoints): `sha256(body)\n<body>`,
 * written to a temp file, fsynced and renamed into place (mode 0600), so a reader sees the old file
 * or the new one, never half of one.
 */
export function writeChecksummedFile(path: string, body: string): void {
  const sum = createHash('sha256').update(body).digest('hex');
  writeFileAtomic(path, `${sum}\n${body}`);
}

/** Temp file, fsync, rename (mode 0600 unless given): a reader sees the old file or the new one, never half of one. */
export function writeFileAtomic(path: string, data: string | Buffer, mode = 0o600): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, data, { mode });
  const fd = openSync(tmp, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

/** The body of a file {@link writeChecksummedFile} wrote, or why it cannot be used. */
export function readChecksummedFile(path: string): { body?: string; why?: string } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return { why: 'no checkpoint' };
  }
  const nl = text.indexOf('\n');
  const body = text.slice(nl + 1);
  if (nl < 0 || createHash('sha256').update(body).digest('hex') !== text.slice(0, nl)) return { why: 'checksum mismatch' };
  return { body };
}
