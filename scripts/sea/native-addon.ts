// A `.node` addon travels inside the single executable as a SEA asset. dlopen needs a real file, so the
// asset is written once to $XDG_CACHE_HOME/gds/native/<name>-<sha>.node (temp file, then rename: a
// concurrent or interrupted run never sees half a file) and loaded from there on every later run, once
// its bytes are the embedded asset's, byte for byte: a file planted or altered in the cache is rewritten,
// never loaded. (Compared, not hashed: node:crypto and a sha256 of PostgreSQL's parser, 3 MB, would cost
// a push more than the read.)
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { getRawAsset } from 'node:sea';
import { cacheDir } from '../../src/core/folders.js';
import { writeCacheFile } from './cache-dir.js';

/**
 * Filled in by scripts/build-binary.ts: asset key -> `<platform>-<arch>` -> sha256 of that platform's file,
 * known at build time. One bundle serves every platform's executable (build-binaries.ts); each executable
 * carries its own platform's file under the asset key.
 */
declare const GDS_NATIVE_ADDONS: Record<string, Record<string, string>>;

export function nativeCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheDir(env), 'native');
}

export function loadEmbeddedAddon(name: string): unknown {
  const platform = `${process.platform}-${process.arch}`;
  const sha = GDS_NATIVE_ADDONS[name]?.[platform];
  if (sha === undefined) throw new Error(`No native addon named ${name} for ${platform} in this executable.`);
  const dir = nativeCacheDir();
  const file = join(dir, `${name}-${sha.slice(0, 16)}.node`);
  // A view of the executable's own pages: nothing copied.
  const embedded = new Uint8Array(getRawAsset(`${name}.node`));
  if (!holdsExactly(file, embedded)) writeCacheFile(dir, file, embedded, 0o700);
  const module = { exports: {} as unknown };
  process.dlopen(module, file);
  return module.exports;
}

/**
 * Whether the file holds exactly `bytes` (false when it cannot be read), read a piece at a time: reading
 * PostgreSQL's parser (3.6 MB) whole would add as much to a push's peak memory.
 */
function holdsExactly(file: string, bytes: Uint8Array): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    if (fstatSync(fd).size !== bytes.byteLength) return false;
    const piece = Buffer.allocUnsafe(1 << 16);
    for (let at = 0; at < bytes.byteLength;) {
      const read = readSync(fd, piece, 0, piece.length, at);
      if (read === 0 || !piece.subarray(0, read).equals(bytes.subarray(at, at + read))) return false;
      at += read;
    }
    return true;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
