// What `npm install gds` gets: the compiled CLI and its entry, and the bundle prepack adds
// (scripts/build-package-bundles.ts), not the single executable or its build.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildPackageBundle } from '../../scripts/build-package-bundles.js';
import { ensureBuilt, repoRoot } from '../cli/helpers/cli-process.js';

let packed: Array<{ path: string; size: number }> | undefined;

/** The files `npm pack` puts in the package (without running prepack), with their sizes: asked of npm once. */
function packedFiles(): Array<{ path: string; size: number }> {
  packed ??= packList();
  return packed;
}

function packList(): Array<{ path: string; size: number }> {
  const [pack] = JSON.parse(
    execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: repoRoot,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }),
  ) as Array<{ files: Array<{ path: string; size: number }> }>;
  return pack?.files ?? [];
}

describe('the npm package', () => {
  it('holds bin/run.js and the compiled commands, and nothing of the single-executable build', async () => {
    await ensureBuilt();
    const pack = packedFiles();
    const paths = pack.map((f) => f.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        'bin/run.js',
        'dist/cli/main.js',
        'dist/commands/index.js',
        'package.json',
        'LICENSE',
        'THIRD-PARTY-NOTICES',
      ]),
    );
    expect(paths.filter((p) => p === 'dist/gds' || p.startsWith('dist/sea-build/'))).toEqual([]);
    expect(Math.max(...pack.map((f) => f.size))).toBeLessThan(1024 * 1024);
  });
});

/** Bytes of the files of one installed package, without the packages nested in its own node_modules. */
function packageBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== 'node_modules') total += packageBytes(path);
    else if (entry.isFile()) total += statSync(path).size;
  }
  return total;
}

describe('the npm package installed', () => {
  it('with its runtime dependencies (as package-lock.json resolves them) and its bundle takes at most 30 MiB', async () => {
    await ensureBuilt();
    const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean }>;
    };
    const runtime = Object.entries(lock.packages)
      .filter(([path, meta]) => path !== '' && meta.dev !== true)
      .map(([path]) => join(repoRoot, path))
      .filter((dir) => existsSync(dir)); // another platform's optional addon is not installed
    const dependencies = runtime.reduce((sum, dir) => sum + packageBytes(dir), 0);
    const pack = packedFiles();
    const own = pack.reduce((sum, file) => sum + file.size, 0);
    // The bundle prepack adds (dist/bundle), built here as prepack builds them.
    const scratch = mkdtempSync(join(tmpdir(), 'gds-package-size-'));
    try {
      await buildPackageBundle(scratch, { minify: true });
      const bundles = packageBytes(scratch);
      expect(bundles).toBeGreaterThan(0);
      expect(runtime.filter((dir) => dir.endsWith('/node_modules/tar'))).toEqual([]); // the server's alone
      expect((dependencies + own + bundles) / 2 ** 20).toBeLessThan(30);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
    expect(runtime.some((dir) => dir.endsWith('/node_modules/libpg-query'))).toBe(true);
    expect(runtime.filter((dir) => /node-sql-parser|big-integer/.test(dir))).toEqual([]);
  });
});
