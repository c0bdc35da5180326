// The skip guards and the reporter together, in a real `vitest run` of a small file in a temp folder:
// the run's last lines name each reason once with its count; a test that ran is not counted.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, node24, repoRoot } from '../cli/helpers/cli-process.js';
import { NO_POSTGRES, NO_SHARED_FIXTURES } from './skip.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gds-skip-'));
  const skipModule = JSON.stringify(join(repoRoot, 'test/helpers/skip.ts'));
  await writeFile(
    join(dir, 'sample.test.ts'),
    `import { describe, it } from 'vitest';
import { needs, NO_POSTGRES, NO_SHARED_FIXTURES } from ${skipModule};
describe('on a database', needs(NO_POSTGRES), () => {
  it('one', () => {});
  describe('nested', () => { it('two', () => {}); });
});
it('ran', needs(undefined), () => {});
it('reads a fixture', ({ skip }) => { skip(true, NO_SHARED_FIXTURES); });
`,
  );
});

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('a run with skipped tests', () => {
  it('ends with one line per reason, with the count of tests skipped for it', async () => {
    const child = spawn(
      node24,
      [
        join(repoRoot, 'node_modules/vitest/vitest.mjs'),
        'run',
        '--root',
        dir,
        '--reporter=default',
        `--reporter=${join(repoRoot, 'test/helpers/skip-reporter.ts')}`,
        `--outputFile=${join(dir, 'report.json')}`,
      ],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', CI: '1' } },
    );
    const result = await collect(child);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trimEnd().split('\n').slice(-2)).toEqual([
      `skipped 2 tests: ${NO_POSTGRES}`,
      `skipped 1 test: ${NO_SHARED_FIXTURES}`,
    ]);
    // Still the JSON report .ci/run's closing line is summed from.
    const report = JSON.parse(await readFile(join(dir, 'report.json'), 'utf8')) as Record<string, number>;
    expect(report).toMatchObject({ numPassedTests: 1, numPendingTests: 3, numFailedTests: 0 });
  }, 60_000);
});
