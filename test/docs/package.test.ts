// What `npm install gds` gets: the compiled CLI and its entry, not the single executable or its build.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureBuilt, repoRoot } from '../cli/helpers/cli-process.js';

describe('the npm package', () => {
  it('holds bin/run.js and the compiled commands, and nothing of the single-executable build', async () => {
    await ensureBuilt();
    const [pack] = JSON.parse(
      execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
        cwd: repoRoot,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }),
    ) as Array<{ files: Array<{ path: string; size: number }> }>;
    const paths = pack!.files.map((f) => f.path);
    expect(paths).toEqual(
      expect.arrayContaining(['bin/run.js', 'dist/cli/main.js', 'dist/commands/index.js', 'package.json']),
    );
    expect(paths.filter((p) => p === 'dist/gds' || p.startsWith('dist/sea-build/'))).toEqual([]);
    expect(Math.max(...pack!.files.map((f) => f.size))).toBeLessThan(1024 * 1024);
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
  it('with its runtime dependencies (as package-lock.json resolves them) takes at most 30 MiB', () => {
    const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean }>;
    };
    const runtime = Object.entries(lock.packages)
      .filter(([path, meta]) => path !== '' && meta.dev !== true)
      .map(([path]) => join(repoRoot, path))
      .filter((dir) => existsSync(dir)); // another platform's optional addon is not installed
    const bytes = runtime.reduce((sum, dir) => sum + packageBytes(dir), 0);
    expect(runtime.some((dir) => dir.endsWith('/node_modules/libpg-query'))).toBe(true);
    expect(runtime.filter((dir) => /node-sql-parser|big-integer/.test(dir))).toEqual([]);
    expect(bytes / 2 ** 20).toBeLessThan(30);
  });
});
