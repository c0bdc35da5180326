import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const lintLayers = () => run('npm', ['run', '-s', 'lint:layers'], { cwd: root });

/** Runs lint:layers with `files` planted in a new folder (`under`, a prefix); answers how it failed (null: it passed). */
async function lintWith(
  files: Record<string, string>,
  under = 'src/core/planted-',
): Promise<{ code: number; stdout: string; dir: string } | null> {
  const dir = await mkdtemp(path.join(root, under));
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

  it('fails on a service importing the CLI (its output module)', { timeout: 180_000 }, async () => {
    const failed = await lintWith(
      { 'upward.ts': "export { Output } from '../../cli/output.js';\n" },
      'src/services/planted-',
    );
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

  it(
    'docs/layers.mmd is the diagram npm run docs:layers makes of the code as it is',
    { timeout: 180_000 },
    async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'gds-layers-'));
      try {
        const fresh = path.join(dir, 'layers.mmd');
        await run('npm', ['run', '-s', 'docs:layers', '--', '--output-to', fresh], { cwd: root });
        const arrows = (text: string) =>
          text
            .split('\n')
            .filter((line) => line !== '')
            .sort();
        expect(arrows(await readFile(path.join(root, 'docs/layers.mmd'), 'utf8'))).toEqual(
          arrows(await readFile(fresh, 'utf8')),
        );
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});
