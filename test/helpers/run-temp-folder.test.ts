import { spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { collect, node24, repoRoot } from '../cli/helpers/cli-process.js';

const made: string[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
});

describe("the run's temp folder (vitest.config.ts, globalSetup)", () => {
  it('is a folder of its own, the one every test process and what it starts uses', () => {
    expect(basename(tmpdir())).toMatch(/^gds-test-run-/);
    expect(process.env.TMPDIR).toBe(tmpdir());
  });

  it('leaves nothing behind when the run ends, though a test file leaves its folders', async () => {
    const temp = await mkdtemp(join(tmpdir(), 'gds-outer-temp-'));
    made.push(temp);
    // credentials.test.ts makes its folders with mkdtemp(tmpdir()) and removes none of them.
    const child = spawn(
      node24,
      [
        join(repoRoot, 'node_modules/vitest/vitest.mjs'),
        'run',
        '--reporter=default',
        'test/auth/credentials.test.ts',
      ],
      {
        cwd: repoRoot,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          ...process.env,
          TMPDIR: temp,
          GDS_VITEST_REPORT: join(temp, '..', `${basename(temp)}.json`),
          NO_COLOR: '1',
          CI: '1',
        },
      },
    );
    const result = await collect(child);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(/Test Files\s+1 passed/);
    expect(await readdir(temp)).toEqual([]);
  });
});
