// `gds alias import <file>` takes the file as an argument, not as -f: a file that cannot be read is exit 2 with
// a hint that names the argument. The hint said "-f" (`use -f - to read stdin`), a flag the command does not
// have: the command it suggested failed with "Unknown flag: -f".
import { mkdir, mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/run-in-process.js';

describe('gds alias import of a file it cannot read', () => {
  it('a missing file or a folder: exit 2, a hint naming <file>, never -f, and no settings written', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gds-alias-import-'));
    const folder = join(dir, 'aliases.yml');
    await mkdir(folder);
    const env = { GDS_CONFIG_DIR: join(dir, 'config') };
    for (const path of [join(dir, 'missing.yml'), folder]) {
      const r = await runInProcess(['alias', 'import', path], { env });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(path);
      expect(r.stderr).toContain('<file>');
      expect(r.stderr).not.toMatch(/-f\b/);
    }
    const json = await runInProcess(['alias', 'import', join(dir, 'missing.yml'), '--json'], { env });
    const error = JSON.parse(json.stderr.trim()) as { error: { code: string; suggestion: string } };
    expect(error.error.code).toBe('input_not_found');
    expect(error.error.suggestion).toBe('Check the path given to <file>, or use <file> - to read stdin.');
    expect(await readdir(dir)).toEqual(['aliases.yml']);
  });
});
