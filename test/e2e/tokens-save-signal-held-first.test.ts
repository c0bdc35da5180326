// A Ctrl-C or SIGTERM that came while `gds tokens refresh --save-profile ci` waited for the service's answer is held
// until the answer is saved. The save then found the config file's lock held by another gds for a moment (any write
// of the config takes it a few milliseconds): with the signal already held, its first try failed the save at once
// ("Interrupted while waiting for another gds writing …config.json", the tokens shown, not saved). It waits now, as
// a save waits without a held signal (within the held signal's bound), and saves; gds then exits by the signal. A
// real gds process (from its sources), its service answering only once gds said it holds the signal, the config's
// lock held by the test until gds says it waits for it.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig, updateConfig } from '../../src/auth/config.js';
import { cliEnv, collect, node24, repoRoot } from '../cli/helpers/cli-process.js';
import { integrationAnswers } from '../helpers/integration-answers.js';

const { tokens } = integrationAnswers('tok_heldFirst42');

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

/** A service that answers `body` to the first request only once `answer()` is called; `asked` settles at it. */
async function serviceAnsweringWhenTold(body: unknown) {
  let asked!: () => void;
  const requested = new Promise<void>((resolve) => (asked = resolve));
  let answer!: () => void;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      asked();
      void answered.then(() =>
        response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body)),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  cleanup.push(async () => {
    answer();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${port}`, requested, answer };
}

/** Holds the config file's lock, as another gds writing it would, until the function returned is called. */
async function holdConfigLock(env: NodeJS.ProcessEnv) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let taken!: () => void;
  const holding = new Promise<void>((resolve) => (taken = resolve));
  const writing = updateConfig(
    async () => {
      taken();
      await released;
    },
    { env },
  );
  await holding;
  let done = false;
  const letGo = async () => {
    if (done) return;
    done = true;
    release();
    await writing;
  };
  cleanup.push(letGo);
  return letGo;
}

/** gds from its sources with GDS_DEBUG; `said(text)` settles once its stderr holds `text` (rejects if it ended). */
function startGds(args: string[], env: Record<string, string>) {
  const child = spawn(node24, ['--import', 'tsx', 'bin/dev.js', ...args], {
    cwd: repoRoot,
    env: cliEnv({ ...env, GDS_DEBUG: '1', NO_COLOR: '1' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const result = collect(child);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer | string) => (stderr += String(chunk)));
  const said = (text: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (stderr.includes(text)) resolve();
      };
      child.stderr.on('data', check);
      check();
      void result.then((r) =>
        reject(new Error(`gds ended (${r.code}) before saying "${text}":\n${r.stderr}`)),
      );
    });
  return { child, result, said };
}

describe.each(['SIGINT', 'SIGTERM'] as const)('%s held before the save starts', (signal) => {
  it('the config file locked a moment by another gds: the save waits for it, saves, and gds exits by the signal', async () => {
    const env = {
      GDS_CONFIG_DIR: join(await mkdtemp(join(tmpdir(), 'gds-held-first-')), 'gds'),
      GDS_SECRET_STORAGE: 'file',
    };
    const service = await serviceAnsweringWhenTold({ tokens });
    const gds = startGds(
      [
        'tokens',
        'refresh',
        '--refresh-token',
        'tok_heldFirst42.oldRefreshSecret42',
        '--save-profile',
        'ci',
        '--json',
      ],
      { ...env, SERVICE_API_URL: service.url },
    );
    await service.requested;
    gds.child.kill(signal);
    await gds.said(`${signal} held`);
    const letGo = await holdConfigLock(env);
    service.answer();
    await gds.said('config.json.lock: held by another process; waiting up to');
    await letGo();
    const r = await gds.result;

    expect(r.code, r.stderr).toBe(signal === 'SIGINT' ? 130 : 143);
    const profile = (await loadConfig({ env })).profiles.ci;
    expect(profile).toMatchObject({
      kind: 'integration',
      tokenId: 'tok_heldFirst42',
      ...{ accessToken: tokens.accessToken, refreshToken: tokens.refreshToken },
    });
    const errors = r.stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { error?: unknown })
      .filter((line) => line.error !== undefined);
    expect(errors).toEqual([]);
    expect(r.stdout).toMatch(/"profile":"ci"/);
  }, 120_000);
});
