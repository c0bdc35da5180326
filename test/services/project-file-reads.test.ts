// The files plan and apply read besides the dbt project's own: gds.yml and a saved plan. Each is read as
// dbt_project.yml is (io/input.ts readBoundedText): a regular file, bounded. A FIFO named as either blocked gds
// for good (not even SIGTERM ended it), and /dev/zero as the plan was read to 700 MB before it was refused.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PROJECT_FILE_BYTES, readProjectConfig } from '../../src/services/project-config.js';
import { readPlanFile } from '../../src/services/project-saved.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gds-project-files-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a saved plan', () => {
  it('that is a device or a FIFO is exit 2 at once, unread', async () => {
    await expect(readPlanFile('/dev/zero')).rejects.toMatchObject({
      exitCode: 2,
      code: 'input_not_a_file',
      message: '/dev/zero is a character device, not a regular file: gds reads a plan file from a file.',
    });
    const fifo = join(dir, 'plan.fifo');
    execFileSync('mkfifo', [fifo]);
    await expect(readPlanFile(fifo)).rejects.toMatchObject({ exitCode: 2, code: 'input_not_a_file' });
  });

  it('that is missing is still "not a plan gds plan --out wrote" (exit 2)', async () => {
    await expect(readPlanFile(join(dir, 'none.json'))).rejects.toMatchObject({
      exitCode: 2,
      code: 'invalid_plan_file',
      message: `${join(dir, 'none.json')} is not a plan gds plan --out wrote: there is no such file.`,
    });
  });
});

describe('gds.yml', () => {
  it('over the bound of dbt_project.yml is exit 2 naming it; a FIFO is exit 2 at once', async () => {
    const bigDir = join(dir, 'big');
    await mkdir(bigDir);
    await writeFile(join(bigDir, 'gds.yml'), `# ${'x'.repeat(MAX_PROJECT_FILE_BYTES)}\nconnector: con_1\n`);
    await expect(readProjectConfig(bigDir)).rejects.toMatchObject({
      exitCode: 2,
      code: 'input_too_large',
      message: expect.stringContaining('over the limit of 1,048,576 bytes for a gds.yml'),
    });
    const fifoDir = join(dir, 'fifo');
    await mkdir(fifoDir);
    execFileSync('mkfifo', [join(fifoDir, 'gds.yml')]);
    await expect(readProjectConfig(fifoDir)).rejects.toMatchObject({ exitCode: 2, code: 'input_not_a_file' });
  });

  it('that is missing is no settings, and one within the bound is read', async () => {
    expect(await readProjectConfig(join(dir, 'nowhere'))).toBeUndefined();
    const okDir = join(dir, 'ok');
    await mkdir(okDir);
    await writeFile(join(okDir, 'gds.yml'), 'connector: con_1\n');
    expect(await readProjectConfig(okDir)).toEqual({
      file: join(okDir, 'gds.yml'),
      config: { connector: 'con_1' },
    });
  });
});
