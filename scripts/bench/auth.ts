// The credentials layer: a locked atomic config write and a credential lookup in one process (medians),
// and 16 `gds auth set` processes started at once on one config (wall time until the last exits). The
// secrets go to the file here (GDS_SECRET_STORAGE=file): the keychain's cost depends on the desktop.
import { spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { updateConfig } from '../../src/auth/config.js';
import { resolveCredentials } from '../../src/auth/credentials.js';
import { setStaticProfile } from '../../src/auth/profiles.js';
import { medianMs } from './lib/measure.js';
import type { BenchModule } from './types.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const node = join(root, 'node_modules/.bin/node');
const rounds = 50;

function gdsSet(env: NodeJS.ProcessEnv, i: number): Promise<void> {
  const args = ['bin/run.js', 'auth', 'set', '--token', `cli_bench${i}`, '--base', 'https://b.example'];
  return new Promise((resolve, reject) => {
    const child = spawn(node, [...args, '--profile', `p${i}`], { cwd: root, env, stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`auth set exited ${code}`))));
  });
}

export const run: BenchModule = async () => {
  const env = {
    GDS_CONFIG_DIR: join(await mkdtemp(join(tmpdir(), 'gds-bench-auth-')), 'gds'),
    GDS_SECRET_STORAGE: 'file',
  };
  await setStaticProfile({ name: 'default', token: 'cli_bench', base: 'https://b.example' }, { env });
  const write = await medianMs(rounds, () => updateConfig(() => undefined, { env }));
  const read = await medianMs(rounds, () => resolveCredentials({}, env));
  const started = performance.now();
  await Promise.all(Array.from({ length: 16 }, (_, i) => gdsSet({ ...process.env, ...env }, i)));
  const parallel = performance.now() - started;
  return [
    {
      section: 'auth',
      name: 'config write (lock, re-read, fsync, rename)',
      value: `${write.toFixed(1)} ms`,
      note: `median of ${rounds}`,
    },
    {
      section: 'auth',
      name: 'resolveCredentials from a profile',
      value: `${read.toFixed(2)} ms`,
      note: `median of ${rounds}`,
    },
    {
      section: 'auth',
      name: '16 parallel `gds auth set`',
      value: `${parallel.toFixed(0)} ms`,
      note: 'until the last exits, 2 cores',
    },
  ];
};
