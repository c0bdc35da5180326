import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');

describe('npm run lint:layers', () => {
  it(
    'fails on a new upward import (core importing cli) and passes without it',
    { timeout: 180_000 },
    async () => {
      const dir = await mkdtemp(path.join(root, 'src/core/planted-'));
      const planted = path.join(dir, 'upward.ts');
      await writeFile(planted, "export { CliError } from '../../cli/errors.js';\n");
      try {
        const failed = await run('npm', ['run', '-s', 'lint:layers'], { cwd: root }).then(
          () => null,
          (error: { code: number; stdout: string }) => error,
        );
        expect(failed?.code).toBe(1);
        expect(failed?.stdout).toContain('nothing-below-cli-imports-it');
        expect(failed?.stdout).toContain(path.relative(root, planted));
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
      await expect(run('npm', ['run', '-s', 'lint:layers'], { cwd: root })).resolves.toBeDefined();
    },
  );
});
