// `gds auth logout` without --profile, as the spec has it ("Clear one profile, or the whole config file when
// no profile is given"), on a terminal too: no question whose Enter forgets only one profile and leaves the
// other's token on disk.
import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/run-in-process.js';

async function configDirWithTwoProfiles(): Promise<string> {
  const configDir = join(await mkdtemp(join(tmpdir(), 'gds-logout-')), 'gds');
  for (const name of ['p1', 'p2']) {
    const set = await runInProcess(
      [
        'auth',
        'set',
        '--no-verify',
        '--token',
        `cli_${name}SecretToken42`,
        '--base',
        `https://${name}.example`,
      ],
      { env: { GDS_CONFIG_DIR: configDir, GDS_SECRET_STORAGE: 'file', GDS_PROFILE: name } },
    );
    expect(set.code, set.stderr).toBe(0);
  }
  expect(Object.keys(JSON.parse(await readFile(join(configDir, 'config.json'), 'utf8')).profiles)).toEqual([
    'p1',
    'p2',
  ]);
  return configDir;
}

describe('gds auth logout without --profile', () => {
  it('on a terminal removes every profile and the config file, asking nothing', async () => {
    const configDir = await configDirWithTwoProfiles();
    const r = await runInProcess(['auth', 'logout'], {
      terminal: true,
      env: { GDS_CONFIG_DIR: configDir, GDS_SECRET_STORAGE: 'file', NO_COLOR: '1' },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('✓ Removed profile p1.\n');
    expect(r.stderr).toContain('✓ Removed profile p2.\n');
    expect(r.stderr).toContain(`✓ Removed ${join(configDir, 'config.json')}.\n`);
    await expect(stat(join(configDir, 'config.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  }, 15_000); // a question asked would wait for ever on the closed stdin
});
