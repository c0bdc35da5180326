import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const lintLayers = () => run('npm', ['run', '-s', 'lint:layers'], { cwd: root });

/** Runs lint:layers with `files` planted in a new folder under src/core; answers how it failed (null: it passed). */
async function lintWith(
  files: Record<string, string>,
): Promise<{ code: number; stdout: string; dir: string } | null> {
  const dir = await mkdtemp(path.join(root, 'src/core/planted-'));
  try {
    for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text);
    return await lintLayers().then(
      () => null,
      (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout, dir }),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('npm run lint:layers', () => {
  it('passes on the repository as it is: no upward import, no cycle', { timeout: 180_000 }, async () => {
    await expect(lintLayers()).resolves.toBeDefined();
  });

  it('fails on a new upward import (core importing cli)', { timeout: 180_000 }, async () => {
    const failed = await lintWith({ 'upward.ts': "export { toCliError } from '../../cli/errors.js';\n" });
    expect(failed?.code).toBe(1);
    expect(failed?.stdout).toContain('nothing-below-cli-imports-it');
    expect(failed?.stdout).toContain(path.relative(root, path.join(failed?.dir ?? '', 'upward.ts')));
  });

  it('fails on a new import cycle', { timeout: 180_000 }, async () => {
    const failed = await lintWith({
      'a.ts': "import { b } from './b.js';\nexport const a = (): number => b() + 1;\n",
      'b.ts': "import { a } from './a.js';\nexport const b = (): number => (a.length > 1 ? 0 : 1);\n",
    });
    expect(failed?.code).toBe(1);
    expect(failed?.stdout).toContain('no-circular');
    expect(failed?.stdout).toContain(path.relative(root, path.join(failed?.dir ?? '', 'a.ts')));
  });
});
