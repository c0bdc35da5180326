// A workspace of 100,000 tables on the embedded PGlite: `gds list --json` (time to its first line,
// the whole list, the CLI's peak memory), `gds list -L 5`, and a recertification signal naming one table
// (median), with another request's time while signals run. The tables are copies of a seeded Mode A table
// made in SQL; the server runs in this process, the CLI in its own: the single executable (dist/gds) when it
// is built, else `node bin/run.js`; the list rows again for the packed npm package (lib/npm-package.ts).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { countText } from '../../src/core/count-text.js';
import { largeWorkspace } from './lib/large-workspace.js';
import { unpackedPackage } from './lib/npm-package.js';
import type { BenchModule, BenchRow } from './types.js';

const TABLES = 100_000;
const root = new URL('../..', import.meta.url).pathname;
const binary = `${root}dist/gds`;
const node = `${root}node_modules/.bin/node`;
const defaultCli = existsSync(binary) ? [binary] : [node, 'bin/run.js'];

/** Runs the CLI under GNU time: when its first stdout byte came, when it ended, its peak RSS (KiB). */
function runCli(args: string[], env: NodeJS.ProcessEnv, cli: string[] = defaultCli) {
  return new Promise<{ firstMs: number; totalMs: number; peakMiB: number; lines: number; code: number }>(
    (resolve, reject) => {
      const started = performance.now();
      const child = spawn('/usr/bin/time', ['-f', '%M', ...cli, ...args], {
        cwd: root,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let firstMs = NaN;
      let lines = 0;
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => {
        if (Number.isNaN(firstMs)) firstMs = performance.now() - started;
        for (const byte of chunk) if (byte === 10) lines += 1;
      });
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      child.on('error', reject);
      child.on('close', (code) => {
        const peak = Number(/(\d+)\s*$/.exec(stderr)?.[1] ?? NaN);
        resolve({
          firstMs,
          totalMs: performance.now() - started,
          peakMiB: peak / 1024,
          lines,
          code: code ?? 1,
        });
      });
    },
  );
}

type CliRun = Awaited<ReturnType<typeof runCli>>;

/** The rows of `gds list --json` of every table (`all`) and of `-L 5` (`few`), for one way of running gds. */
function listRows(runner: string, note: string, all: CliRun, few: CliRun): BenchRow[] {
  return [
    {
      section: 'scale',
      name: `gds list --json${runner}: first line`,
      value: `${all.firstMs.toFixed(0)} ms`,
      note: `${note}; budget 300 ms: ${all.firstMs <= 300 ? 'within' : 'OVER'}`,
    },
    {
      section: 'scale',
      name: `gds list --json${runner}: every table`,
      value: `${(all.totalMs / 1000).toFixed(1)} s`,
      note: `${all.lines} lines, CLI peak ${all.peakMiB.toFixed(0)} MiB (budget 80 MiB: ${all.peakMiB <= 80 ? 'within' : 'OVER'})`,
    },
    {
      section: 'scale',
      name: `gds list -L 5 --json${runner}`,
      value: `${few.totalMs.toFixed(0)} ms`,
      note: `${few.lines} lines, CLI peak ${few.peakMiB.toFixed(0)} MiB`,
    },
  ];
}

/** `gds list --json` of every table and `-L 5` from the packed npm package (its command bundle for list). */
async function npmPackageRows(env: NodeJS.ProcessEnv, tables: number): Promise<BenchRow[]> {
  const scratch = await mkdtemp(join(tmpdir(), 'gds-bench-npm-'));
  try {
    const cli = [node, join(await unpackedPackage(scratch), 'bin/run.js')];
    // One run first, as after any other: Node's compile cache of a package just unpacked is empty.
    await runCli(['list', '-L', '1', '--json'], env, cli);
    const all = await runCli(['list', '--json'], env, cli);
    if (all.code !== 0) throw new Error(`gds list --json (npm package) exited ${all.code}`);
    const few = await runCli(['list', '-L', '5', '--json'], env, cli);
    const note = `PGlite, ${countText(tables)} tables, the packed npm package (node bin/run.js, after one run)`;
    return listRows(' (npm package)', note, all, few);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

export const run: BenchModule = async () => {
  const { server, template, made } = await largeWorkspace(TABLES);
  try {
    const env = {
      PATH: process.env.PATH,
      HOME: '/tmp',
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: server.user('OWNER').cliToken,
    };
    // A server answers its first request after start slowly (in this process, with the contract checked:
    // about 100 ms for GET /api/me, then 6 ms), whatever it is: one other request first, so the first line
    // is the CLI's and the list's, as against a server already in use.
    const warm = await server.request('GET', '/api/me', { token: env.SERVICE_TOKEN });
    if (warm.status !== 200) throw new Error(`GET /api/me answered ${warm.status}`);
    const note = `PGlite, ${countText(TABLES)} tables (made in ${made} s), ${defaultCli.length === 1 ? 'dist/gds' : 'node bin/run.js'}, the server warmed by GET /api/me`;
    const rows: BenchRow[] = [];
    // The server's resident memory while it answers the whole list (it runs in this process), sampled.
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 20);
    const all = await runCli(['list', '--json'], env);
    clearInterval(sampler);
    const growthMiB = (rssPeak - rssBefore) / 2 ** 20;
    if (all.code !== 0) throw new Error(`gds list --json exited ${all.code}`);
    const few = await runCli(['list', '-L', '5', '--json'], env);
    rows.push(...listRows('', note, all, few), {
      section: 'scale',
      name: 'gds list --json: server RSS growth',
      value: `${growthMiB.toFixed(0)} MiB`,
      note: `the server's resident memory while it answers every page (sampled every 20 ms), over its ${(rssBefore / 2 ** 20).toFixed(0)} MiB before; budget 100 MiB: ${growthMiB <= 100 ? 'within' : 'OVER'}`,
    });
    rows.push(...(await npmPackageRows(env, TABLES)));

    const issued = await server.issueToken('OWNER', {
      name: 'bench-recertify',
      env: 'dev',
      scopes: ['workspace:write:recertify'],
    } as never);
    const token = issued.tokens.accessToken;
    const signal = async (i: number) => {
      const t = performance.now();
      const response = await server.request('POST', '/api/workspace/recertify', {
        token,
        body: { tables: [`bench_${(i * 7919) % TABLES}`], trigger: 'BENCH' },
      });
      if (response.status !== 200) throw new Error(`recertify answered ${response.status}`);
      return performance.now() - t;
    };
    const times: number[] = [];
    for (let i = 1; i <= 7; i++) times.push(await signal(i));
    const median = times.sort((a, b) => a - b)[3] ?? NaN;
    rows.push({
      section: 'scale',
      name: 'recertify one name',
      value: `${median.toFixed(0)} ms`,
      note: `${note}, median of 7; budget 200 ms: ${median <= 200 ? 'within' : 'OVER'}`,
    });
    const [, other] = await Promise.all([
      signal(99),
      (async () => {
        const t = performance.now();
        await server.request('GET', `/api/tables/${template.id}/status`, {
          token: server.user('OWNER').cliToken,
        });
        return performance.now() - t;
      })(),
    ]);
    rows.push({
      section: 'scale',
      name: 'a status read beside a signal',
      value: `${other.toFixed(0)} ms`,
      note: `${note}; budget 200 ms: ${other <= 200 ? 'within' : 'OVER'}`,
    });
    return rows;
  } finally {
    await server.close();
  }
};
