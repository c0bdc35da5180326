// The build's training run (scripts/sea/train.ts) goes through every run it is given, also when a run does all
// its work synchronously and leaves nothing for the event loop: the next run starts from `beforeExit`, which
// Node emits again only when the listener before it left work behind.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { scriptOptions } from '../../scripts/bundle/esbuild-plugins.js';
import { bundleWrapper } from '../../scripts/sea/bundle-script.js';
import { repoRoot } from '../cli/helpers/cli-process.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gds-train-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/** The trainer as scripts/build-binary.ts builds it, run with these arguments. */
async function train(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const trainer = join(dir, 'train.cjs');
  await build({
    ...scriptOptions({ minify: false }),
    entryPoints: [join(repoRoot, 'scripts/sea/train.ts')],
    outfile: trainer,
  });
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [trainer, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

it('runs every run, each synchronous, and then writes the code cache', async () => {
  const runsLog = join(dir, 'runs.log');
  const bundle = join(dir, 'gds.cjs');
  const body = `require('node:fs').appendFileSync(${JSON.stringify(runsLog)}, process.argv.slice(2).join(' ') + '\\n');`;
  await writeFile(bundle, `${bundleWrapper.head}${body}${bundleWrapper.tail}`);
  const cache = join(dir, 'gds.cache');
  const runs = [['list', '--json'], ['gate', 'validate'], ['whoami'], ['--version']];

  const result = await train([bundle, cache, JSON.stringify(runs)]);

  expect(result).toMatchObject({ code: 0, stderr: '' });
  expect((await readFile(runsLog, 'utf8')).trimEnd().split('\n')).toEqual(runs.map((argv) => argv.join(' ')));
  expect((await stat(cache)).size).toBeGreaterThan(0);
});
