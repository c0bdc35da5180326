// A `.node` addon travels inside the single executable as a SEA asset. dlopen needs a real file, so the
// asset is written once to $XDG_CACHE_HOME/gds/native/<name>-<sha>.node (temp file, then rename: a
// concurrent or interrupted run never sees half a file) and loaded from there on every later run, once
// its bytes match the sha256 known at build time: a file planted or altered in the cache is rewritten,
// never loaded.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
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
  if (sha256Of(file) !== sha) writeAddon(name, sha, dir, file);
  const module = { exports: {} as unknown };
  process.dlopen(module, file);
  return module.exports;
}

/** The sha256 of a file, undefined when it cannot be read. */
function sha256Of(file: string): string | undefined {
  try {
    return createHash('sha256').update(readFileSync(file)).digest('hex');
  } catch {
    return undefined;
  }
}

function writeAddon(name: string, sha: string, dir: string, file: string): void {
  const bytes = new Uint8Array(getRawAsset(`${name}.node`));
  if (createHash('sha256').update(bytes).digest('hex') !== sha) {
    throw new Error(`The embedded ${name} addon does not match its checksum: rebuild the executable.`);
  }
  writeCacheFile(dir, file, bytes, 0o700);
}
