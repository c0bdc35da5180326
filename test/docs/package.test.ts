// What `npm install gds` gets: the compiled CLI and its entry, not the single executable or its build.
import { execFileSync } from 'node:child_process';
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
