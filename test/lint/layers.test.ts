import { execFile } from 'node:child_process';
import { copyFile, cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const lintLayers = (cwd: string) => run('npm', ['run', '-s', 'lint:layers'], { cwd });

interface Planting {
  /** A prefix of the new folder the files go into. */
  under: string;
  files: Record<string, string>;
}

/**
 * Runs lint:layers once in a copy of the repository's source with every planting in a folder of its own, and
 * answers the run's exit code and output and the folder each planting got (its path from the copy's root, as
 * the output names it). A copy, because other test files read src/ meanwhile (a build, a scan of the sources);
 * one run for all plantings, because each run cruises the whole tree (about 3 s of CPU).
 */
async function lintWith(
  plantings: Planting[],
): Promise<{ code: number | null; stdout: string; dirs: string[] }> {
  const copy = await mkdtemp(path.join(tmpdir(), 'gds-layers-'));
  try {
    await cp(path.join(root, 'src'), path.join(copy, 'src'), { recursive: true });
    for (const file of ['package.json', 'tsconfig.json', '.dependency-cruiser.cjs'])
      await copyFile(path.join(root, file), path.join(copy, file));
    await symlink(path.join(root, 'node_modules'), path.join(copy, 'node_modules'));
    const dirs: string[] = [];
    for (const { under, files } of plantings) {
      const dir = await mkdtemp(path.join(copy, under));
      dirs.push(path.relative(copy, dir));
      for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text);
    }
    return await lintLayers(copy).then(
      ({ stdout }) => ({ code: null, stdout, dirs }),
      (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout, dirs }),
    );
  } finally {
    await rm(copy, { recursive: true, force: true });
  }
}

/** The lines of lint:layers' output that name `file`. */
const linesNaming = (stdout: string, file: string) =>
  stdout.split('\n').filter((line) => line.includes(file));

describe('npm run lint:layers', () => {
  // One run serves the repository as it is and the plantings: each run cruises the whole tree, and the
  // copy is the repository's source plus the planted folders, so a violation outside them is the repository's.
  let failed: Awaited<ReturnType<typeof lintWith>>;
  beforeAll(async () => {
    failed = await lintWith([
      // a new upward import (core importing cli)
      {
        under: 'src/core/planted-',
        files: { 'upward.ts': "export { toCliError } from '../../cli/errors.js';\n" },
      },
      // a service importing the CLI (its output module)
      {
        under: 'src/services/planted-',
        files: { 'upward.ts': "export { Output } from '../../cli/output.js';\n" },
      },
      // a new import cycle
      {
        under: 'src/core/planted-',
        files: {
          'a.ts': "import { b } from './b.js';\nexport const a = (): number => b() + 1;\n",
          'b.ts': "import { a } from './a.js';\nexport const b = (): number => (a.length > 1 ? 0 : 1);\n",
        },
      },
    ]);
  }, 300_000);

  it('passes on the repository as it is: no upward import, no cycle', () => {
    const violations = failed.stdout.split('\n').filter((line) => /^\s*error /.test(line));
    expect(violations.length).toBeGreaterThan(0); // the plantings' own, which the output does show
    expect(violations.filter((line) => !failed.dirs.some((dir) => line.includes(`${dir}/`)))).toEqual([]);
  });

  describe('fails on each planted violation', () => {
    // dependency-cruiser exits with the number of violations: one for each planting, none elsewhere.
    it('exits 3, a violation for each planting', () => {
      expect(failed.code).toBe(3);
    });

    it('on a new upward import (core importing cli)', () => {
      const lines = linesNaming(failed.stdout, path.join(failed.dirs[0] ?? '', 'upward.ts'));
      expect(lines.some((line) => line.includes('nothing-below-cli-imports-it'))).toBe(true);
    });

    it('on a service importing the CLI (its output module)', () => {
      const lines = linesNaming(failed.stdout, path.join(failed.dirs[1] ?? '', 'upward.ts'));
      expect(lines.some((line) => line.includes('nothing-below-cli-imports-it'))).toBe(true);
    });

    it('on a new import cycle', () => {
      const lines = linesNaming(failed.stdout, path.join(failed.dirs[2] ?? '', 'a.ts'));
      expect(lines.some((line) => line.includes('no-circular'))).toBe(true);
    });
  });

  it(
    'docs/layers.mmd is the diagram npm run docs:layers makes of the code as it is',
    { timeout: 300_000 },
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
