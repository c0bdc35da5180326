// A generated 2,000-model dbt project on each engine (PGlite; PostgreSQL when GDS_TEST_DATABASE_URL is set):
// its first `gds apply`, then a no-change `gds plan --json`, then two and three such plans at once; a first
// apply of 500 models at the default rate limit (200 requests a minute a token), counting its 429s; the
// no-change plan again once each table holds ten gate1.yml versions (a project's months of CI); and the
// CLI's peak memory planning 5,000 models (its stdout a pipe, as `| jq`). Each row: wall time of the gds
// process, its requests (counted from GDS_DEBUG's one line per request), 429s met, and its peak memory (maximum
// resident set, read by /usr/bin/time when there is one). And the no-change plan of the applied 2,000 models
// beside 100,000 tables of another environment (`wide`): a table name is one per workspace, yet the plan must
// not read them all. And (`team`, only when asked for) a team's project in a workspace of 100,000 tables, 58,800
// of them other teams' in its environment: plan, apply, apply --prune, recertify, status, review, gate, TAB
// completion (its requests not counted: __complete writes nothing on stderr) and list --json | head -1. And
// (`split`, only when asked for) the server's CPU of one no-change plan of the applied project, by request
// and by thread.
// GDS_BENCH_MODELS changes the 2,000; GDS_BENCH_ONLY=plan5000|rate|scale|wide|team|split runs one part.
//
// Plans at once: Linux shares the CPU between sessions first (the scheduler's autogroups), then between the
// processes of a session. Plans that several people start each run in a session of their own (a terminal's
// shell), so the plan alone and each plan at once run in a session of its own (setsid); three started by
// one script share one session's part of a busy machine, which the last row shows. The plan alone is timed
// three times (as many as the most plans at once), and so is each set of plans at once; a ratio is the median
// round's slowest plan against the median plan alone, split into its floor, the CPU a plan costs at once
// against alone and the share of the two cores used (`ratioParts`). CPU prints to 10 ms, as /usr/bin/time
// reads it: to 0.1 s, 0.55 and 0.58 s read 0.5 and 0.6.
//
// gds runs as users run it: the packed npm package (its one bundle, oclif's manifest built in), not the
// checkout's `bin/run.js`, which loads dist/ module by module and imports every command (about 0.1 s more of
// each plan's CPU).
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliEnv, ensureBuilt, node24, repoRoot } from '../../test/cli/helpers/cli-process.js';
import type { TestServer } from '../../test/helpers/server.js';
import { startTestServer } from '../../test/helpers/server.js';
import { DEFAULT_RATE_LIMIT } from '../../src/server/defaults.js';
import { loadDbtProject } from '../../src/services/dbt-project.js';
import { writeDbtProject } from './dbt-manifest.js';
import { benchCliEnv } from './lib/cli-env.js';
import { unpackedPackage } from './lib/npm-package.js';
import { copyTable } from '../../test/helpers/table-copies.js';
import type { BenchModule, BenchRow } from './types.js';

const TIME = '/usr/bin/time';
const MODELS = Number(process.env.GDS_BENCH_MODELS ?? 2_000);

interface Measured {
  ms: number;
  requests: number;
  tooMany: number;
  peakMb?: number;
  /** User + system CPU of the gds process, seconds. */
  cpuS?: number;
  /** Each request sent (GDS_DEBUG's `→ METHOD URL` line), in order: `METHOD URL`. */
  sent: string[];
}

/** How many times the plan alone, and each set of plans at once, is timed: as many as the most plans at once. */
const ROUNDS = 3;

/** The middle one of `items` by `key` (the upper middle of an even count). */
function median<T>(items: T[], key: (item: T) => number): T {
  const sorted = [...items].sort((a, b) => key(a) - key(b));
  const middle = sorted[Math.floor(sorted.length / 2)];
  if (middle === undefined) throw new Error('median of nothing');
  return middle;
}

/** The packed npm package's `bin/run.js` (set when the bench starts). */
let cliEntry = '';

/**
 * `session: 'own'`: the gds process in a session of its own (setsid), as a person's shell starts it.
 * `stdout: 'pipe'`: its stdout a pipe the bench reads (and drops), as `gds plan --json | jq` has; else /dev/null,
 * which takes every write at once (a pipe's reader may lag, and what gds writes meanwhile waits in its memory).
 */
function measured(
  args: string[],
  env: Record<string, string>,
  options: { session?: 'own' | 'shared'; stdout?: 'pipe' | 'head' } = {},
): Promise<Measured> {
  const timed = existsSync(TIME);
  const [file, argv] = timed
    ? [TIME, ['-f', 'peak-kb %M cpu-s %U %S', node24, cliEntry, ...args]]
    : [node24, [cliEntry, ...args]];
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(file, argv, {
      cwd: repoRoot,
      env: cliEnv({ ...env, GDS_DEBUG: '1' }),
      stdio: ['ignore', options.stdout === undefined ? 'ignore' : 'pipe', 'pipe'],
      detached: options.session === 'own',
    });
    // `head`: as `| head -1`, the pipe closed at the first line.
    if (options.stdout === 'head')
      child.stdout?.on('data', (chunk: Buffer) => {
        if (chunk.includes(10)) child.stdout?.destroy();
      });
    else child.stdout?.resume();
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - started;
      if (code !== 0 && options.stdout !== 'head')
        reject(new Error(`gds ${args.join(' ')} exited ${code}: ${stderr.slice(-2000)}`));
      const kb = /peak-kb (\d+)/.exec(stderr)?.[1];
      const cpu = /cpu-s ([\d.]+) ([\d.]+)/.exec(stderr);
      const sent = [...stderr.matchAll(/→ ([A-Z]+ \S+)/g)].map((m) => m[1] ?? '');
      resolve({
        ms,
        sent,
        requests: sent.length,
        tooMany: (stderr.match(/← 429 /g) ?? []).length,
        ...(kb === undefined ? {} : { peakMb: Number(kb) / 1024 }),
        ...(cpu === null ? {} : { cpuS: Number(cpu[1]) + Number(cpu[2]) }),
      });
    });
  });
}

const figure = (m: Measured) =>
  `${(m.ms / 1000).toFixed(1)} s, ${m.requests} requests${m.peakMb === undefined ? '' : `, ${m.peakMb.toFixed(0)} MiB peak`}${m.cpuS === undefined ? '' : `, ${m.cpuS.toFixed(2)} s CPU`}`;

/** The machine's load average over the last minute, for the note of a timed row. */
const load = () => `load ${loadavg()[0]?.toFixed(1) ?? '?'}`;

type Engine = 'PGlite' | 'PostgreSQL';

/** A server (rate limit off unless given) and a generated project of `models`, its warehouse tables made. */
async function scene(engine: Engine, models: number, rateLimit = 1_000_000_000) {
  const server = await startTestServer({
    rateLimit,
    contractCheck: false,
    // Making 100,000 tables (`wide`) is one INSERT: on a loaded machine it outlasts the default 30 s deadline.
    queryTimeoutMs: 600_000,
    ...(engine === 'PostgreSQL' ? { database: 'postgres' } : {}),
  });
  const dir = mkdtempSync(join(tmpdir(), 'gds-bench-scale-'));
  const connector = server.ready.connectors.find((c) => c.environmentLabel === 'dev')?.id ?? '';
  const env = benchCliEnv(server, dir);
  const generated = writeDbtProject(models, { dir: join(dir, 'generated'), schema: 'analytics_dev' });
  const declared = await loadDbtProject(generated, {});
  const creates = declared.declarations.map(
    (d) =>
      `CREATE TABLE IF NOT EXISTS analytics_dev."${d.name}" (${d.columns.map((c) => `"${c.name}" text`).join(', ')});`,
  );
  for (let at = 0; at < creates.length; at += 200)
    await server.sql(`DO $$ BEGIN ${creates.slice(at, at + 200).join(' ')} END $$`);
  return {
    server,
    env,
    project: ['--dbt', generated, '--connector', connector],
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A first apply of 500 models at the default rate limit: the 429s it met. */
async function rateRows(engine: Engine): Promise<BenchRow[]> {
  const { env, project, close } = await scene(engine, 500, DEFAULT_RATE_LIMIT);
  try {
    const apply = await measured(['apply', ...project, '--yes', '--json'], env);
    return [
      {
        section: `project-scale (${engine})`,
        name: 'gds apply, 500 models, first, at 200 requests a minute',
        value: figure(apply),
        note: `${apply.tooMany} 429s (budget: none); batches of 50 tables a request`,
      },
    ];
  } finally {
    await close();
  }
}

/** The CLI's peak memory planning 5,000 models (nothing applied: every table a create). */
async function planMemoryRows(engine: Engine): Promise<BenchRow[]> {
  const { env, project, close } = await scene(engine, 5_000);
  try {
    const plan = await measured(['plan', ...project, '--json'], env, { stdout: 'pipe' });
    return [
      {
        section: `project-scale (${engine})`,
        name: 'gds plan --json, 5,000 models, first (all create), stdout piped',
        value: figure(plan),
        note: `budget: CLI peak ≤ 200 MiB at 5,000 models; ${load()}`,
      },
    ];
  } finally {
    await close();
  }
}

/** The tables of another environment beside the applied project in the `wide` part. */
const WIDE_TABLES = 100_000;

/**
 * The no-change plan of the applied project once the workspace also holds WIDE_TABLES tables of production
 * (copies of the seeded `customers`): the plan reads its own environment, and asks about no other table.
 */
async function wideRows(engine: Engine): Promise<BenchRow[]> {
  const { server, env, project, close } = await scene(engine, MODELS);
  try {
    const apply = await measured(['apply', ...project, '--yes', '--json', '--concurrency', '8'], env);
    await jobsDone(server);
    const production = server.ready.connectors.find((c) => c.environmentLabel === 'production')?.id ?? '';
    const started = performance.now();
    await copyTable(server, server.table('customers').id, WIDE_TABLES, 'wide', {
      environment_label: `'production'`,
      connector_id: `'${production}'`,
    });
    await server.sql('ANALYZE gds.tables');
    const made = ((performance.now() - started) / 1000).toFixed(1);
    const alone: Measured[] = [];
    for (let round = 0; round < ROUNDS; round += 1)
      alone.push(await measured(['plan', ...project, '--json'], env, { session: 'own' }));
    const plan = median(alone, (m) => m.ms);
    return [
      {
        section: `project-scale (${engine})`,
        name: `gds plan --json, ${MODELS} models, no change, beside ${WIDE_TABLES.toLocaleString('en')} tables of another environment`,
        value: `${figure(plan)} (alone ${alone.map((m) => (m.ms / 1000).toFixed(2)).join(' / ')} s, peaks ${alone.map((m) => m.peakMb?.toFixed(0) ?? '?').join(' / ')} MiB, the median taken)`,
        note: `the project applied first (${figure(apply)}), then the tables made in ${made} s; a no-change plan asks about no table of another environment; ${load()}`,
      },
    ];
  } finally {
    await close();
  }
}

/** The other teams' tables of the `team` part, by where they are: WIDE_TABLES less the project's. */
const TEAM_SHARES = [
  { prefix: 'same_conn_other_project', share: 0.25, project: `'other_team_' || (g % 50)`, connector: 'dev' },
  { prefix: 'same_conn_by_hand', share: 0.15, project: 'NULL', connector: 'dev' },
  { prefix: 'other_conn', share: 0.2, project: `'third_team_' || (g % 20)`, connector: 'dev2' },
  { prefix: 'staging', share: 0.2, project: `'other_team_' || (g % 50)`, connector: 'staging' },
  { prefix: 'production', share: 0.2, project: 'NULL', connector: 'production' },
] as const;

/**
 * A team's 2,000-model project applied in a workspace of WIDE_TABLES tables: the rest other teams' tables on
 * the same connector (other projects' and hand-pushed), on another connector of the environment, and in the
 * other environments. Each command's requests, wall time, CLI peak and CPU, and the server's CPU (this
 * process: PGlite's worker included, PostgreSQL's backends not).
 */
async function teamRows(engine: Engine): Promise<BenchRow[]> {
  const { server, env, project, close } = await scene(engine, MODELS);
  try {
    const section = `project-scale (${engine}), a team's project in ${WIDE_TABLES.toLocaleString('en')} tables`;
    const apply = await measured(['apply', ...project, '--yes', '--json', '--concurrency', '8'], env);
    await jobsDone(server);
    const [one] = await server.sql<{ name: string }>(
      `SELECT name FROM gds.tables WHERE project IS NOT NULL ORDER BY created_at DESC LIMIT 1`,
    );
    const name = one?.name ?? '';
    const ids = new Map(server.ready.connectors.map((c) => [c.environmentLabel, c.id]));
    const dev = ids.get('dev') ?? '';
    await server.sql(
      `INSERT INTO gds.connectors (id, workspace_id, name, type, status, environment_label, warehouse_schema, created_at)
       SELECT 'conn_bench_dev2', workspace_id, 'bench-dev-2', type, status, environment_label, 'other_dev', created_at
         FROM gds.connectors WHERE id = $1`,
      [dev],
    );
    ids.set('dev2', 'conn_bench_dev2');
    const others = WIDE_TABLES - MODELS;
    const started = performance.now();
    for (const { prefix, share, project: owner, connector } of TEAM_SHARES) {
      const environment = connector === 'dev2' ? 'dev' : connector;
      await copyTable(server, server.table('customers').id, Math.round(others * share), prefix, {
        environment_label: `'${environment}'`,
        connector_id: `'${ids.get(connector) ?? ''}'`,
        project: owner,
      });
    }
    await server.sql('ANALYZE gds.tables');
    const made = ((performance.now() - started) / 1000).toFixed(1);
    const serverCpu = () => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1e6;
    };
    const rows: BenchRow[] = [];
    const row = async (
      name: string,
      args: string[],
      extra: Record<string, string> = {},
      stdout: 'pipe' | 'head' = 'pipe',
    ) => {
      const before = serverCpu();
      const m = await measured(args, { ...env, ...extra }, { stdout });
      rows.push({
        section,
        name,
        value: `${figure(m)}, server CPU ${(serverCpu() - before).toFixed(2)} s`,
        note: load(),
      });
    };
    await row(`gds plan --json, ${MODELS} models, no change`, ['plan', ...project, '--json']);
    await row(`gds apply, ${MODELS} models, no change`, ['apply', ...project, '--yes', '--json']);
    await row(`gds apply --prune, ${MODELS} models, no change`, [
      'apply',
      ...project,
      '--yes',
      '--json',
      '--prune',
    ]);
    const results = {
      metadata: {
        dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v6.json',
        dbt_version: '1.8.0',
        invocation_id: 'team',
      },
      results: (
        await server.sql<{ name: string; source: string }>(
          `SELECT name, source FROM gds.tables WHERE connector_id = $1 AND project NOT LIKE 'other_team%'`,
          [dev],
        )
      ).map((t) => ({
        status: 'success',
        unique_id: `model.bench.${t.name}`,
        message: 'SELECT 1',
        adapter_response: {},
        relation_name: `"dev"."${t.source.split('.')[0]}"."${t.source.split('.')[1]}"`,
      })),
      elapsed_time: 60,
      args: { which: 'run' },
    };
    const runResults = join(env.GDS_CONFIG_DIR ?? '', '..', 'run_results.json');
    writeFileSync(runResults, JSON.stringify(results));
    await row(`gds recertify, ${results.results.length} run results`, [
      'recertify',
      '--run-results',
      runResults,
      '--env',
      'dev',
      '--json',
    ]);
    await row(`gds status NAME`, ['status', name, '--json']);
    await row(`gds review --json`, ['review', '--json']);
    await row(`gds gate get NAME`, ['gate', 'get', name]);
    await row(`gds gate jobs NAME`, ['gate', 'jobs', name, '--json']);
    await row(`gds __complete tables PREFIX`, ['__complete', 'tables', name.slice(0, 4)]);
    await row(`gds __complete line -- status PREFIX`, [
      '__complete',
      'line',
      '--',
      'status',
      name.slice(0, 4),
    ]);
    await row(`gds list --json | head -1`, ['list', '--json'], {}, 'head');
    rows.push({
      section,
      name: 'made',
      value: `${made} s`,
      note: `the project applied first: ${figure(apply)}`,
    });
    return rows;
  } finally {
    await close();
  }
}

/** Waits until the server has run every gate job queued so far (apply queues a baseline job per table). */
async function jobsDone(server: TestServer): Promise<void> {
  for (;;) {
    const [row] = await server.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM gds.jobs WHERE status IN ('QUEUED', 'RUNNING')`,
    );
    if ((row?.n ?? 0) === 0) return;
    await sleep(1_000);
  }
}

/** The versions of gate1.yml a table of the history row holds: months of CI applying it. */
const HISTORY_VERSIONS = 10;

/**
 * Gives every table whose gate1.yml has one version HISTORY_VERSIONS of them, as a project's months of CI
 * leave it (versions 2 onwards the same text: the plan stays unchanged).
 */
async function addGate1History(server: TestServer): Promise<void> {
  await server.sql(
    `INSERT INTO gds.gate1_versions (table_id, version, content, created_by, created_at)
     SELECT first.table_id, later.version, first.content, first.created_by, first.created_at
       FROM gds.gate1_versions first CROSS JOIN generate_series(2, $1::int) AS later(version)
      WHERE first.version = 1
        AND NOT EXISTS (SELECT 1 FROM gds.gate1_versions other WHERE other.table_id = first.table_id AND other.version > 1)`,
    [HISTORY_VERSIONS],
  );
  await server.sql(`UPDATE gds.tables SET gate1_version = $1 WHERE gate1_version = 1`, [HISTORY_VERSIONS]);
}

/** Each thread's kind in the bench process (the server's): by the name Node 24 gives it. */
const THREAD_KINDS: Record<string, string> = {
  MainThread: 'request thread',
  WorkerThread: "PGlite's thread",
  V8Worker: "V8's helpers",
};

/** CPU nanoseconds of this process's threads by kind (each `/proc/self/task/<tid>/schedstat`, to the nanosecond). */
function threadCpuNs(): Map<string, number> {
  const byKind = new Map<string, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const ns = Number(readFileSync(`/proc/self/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      const name = readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
      const kind = THREAD_KINDS[name] ?? 'other threads';
      byKind.set(kind, (byKind.get(kind) ?? 0) + ns);
    } catch {
      // the thread ended
    }
  }
  return byKind;
}

/** `after - before` by kind, in ms. */
const threadMs = (before: Map<string, number>, after: Map<string, number>): Map<string, number> =>
  new Map([...after].map(([kind, ns]) => [kind, (ns - (before.get(kind) ?? 0)) / 1e6]));

/** How many times each request of the plan is sent again to split the server's CPU (its median taken). */
const SPLIT_ROUNDS = 15;

/**
 * The server's CPU of one no-change plan by request and by thread (GDS_BENCH_ONLY=split): the plan's requests
 * as gds sent them (GDS_DEBUG), each sent again alone SPLIT_ROUNDS times by a process of its own (so nothing of
 * the client runs in the server's process), each thread's CPU around it: the request thread (Fastify, the
 * answer's JSON and its write), PGlite's thread (its statements and their answers out of WebAssembly), V8's
 * helpers (the collectors' and compilers' threads of both isolates). And whole plans, for the sum. On
 * PostgreSQL its backends are not counted (they are the database's processes).
 */
async function splitRows(engine: Engine): Promise<BenchRow[]> {
  const { server, env, project, close } = await scene(engine, MODELS);
  const replay = spawn(
    node24,
    [
      '-e',
      `const lines = require('node:readline').createInterface({ input: process.stdin });
       const headers = { authorization: 'Bearer ' + process.env.TOKEN, accept: 'application/json' };
       lines.on('line', async (line) => {
         const [method, url] = line.split(' ');
         const res = await fetch(url, { method, headers });
         const bytes = (await res.arrayBuffer()).byteLength;
         process.stdout.write(res.status + ' ' + bytes + '\\n');
       });`,
    ],
    { env: { ...process.env, TOKEN: env.SERVICE_TOKEN }, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const answers = createInterface({ input: replay.stdout })[Symbol.asyncIterator]();
  const send = async (request: string): Promise<{ status: number; bytes: number }> => {
    replay.stdin.write(`${request}\n`);
    const { value, done } = await answers.next();
    const [status, bytes] = String(value).split(' ').map(Number);
    // A replay that died or was refused measures something else than the plan's request: stop, saying which.
    if (done === true || status !== 200) throw new Error(`split: ${request} answered ${String(value)}`);
    return { status, bytes: bytes ?? 0 };
  };
  try {
    const section = `project-scale (${engine}), the server's CPU of a no-change plan`;
    await measured(['apply', ...project, '--yes', '--json', '--concurrency', '8'], env);
    await jobsDone(server);
    // Two plans first: the server's caches (gate1.yml versions) as after a first plan, its code warm.
    await measured(['plan', ...project, '--json'], env);
    const plan = await measured(['plan', ...project, '--json'], env);
    const rows: BenchRow[] = [];
    const kinds = [...Object.values(THREAD_KINDS), 'other threads'];
    const say = (ms: Map<string, number>) =>
      kinds.map((kind) => `${kind} ${(ms.get(kind) ?? 0).toFixed(1)}`).join(', ');
    const total = new Map<string, number>();
    for (const request of plan.sent) {
      const rounds: Array<Map<string, number>> = [];
      let answer = { status: 0, bytes: 0 };
      for (let round = 0; round < SPLIT_ROUNDS + 2; round += 1) {
        const before = threadCpuNs();
        answer = await send(request);
        const ms = threadMs(before, threadCpuNs());
        if (round >= 2) rounds.push(ms); // two to warm
      }
      const medians = new Map(
        kinds.map((kind) => [kind, median(rounds, (r) => r.get(kind) ?? 0).get(kind) ?? 0]),
      );
      for (const [kind, ms] of medians) total.set(kind, (total.get(kind) ?? 0) + ms);
      const all = median(rounds, (r) => [...r.values()].reduce((a, b) => a + b, 0));
      rows.push({
        section,
        name: request.replace(/^(\S+ )https?:\/\/[^/]+/, '$1').slice(0, 120),
        value: `${[...all.values()].reduce((a, b) => a + b, 0).toFixed(1)} ms: ${say(medians)}`,
        note: `${answer.status}, ${(answer.bytes / 1024).toFixed(0)} KiB; the median of ${SPLIT_ROUNDS}; ${load()}`,
      });
    }
    rows.push({
      section,
      name: `the ${plan.sent.length} requests, each alone`,
      value: `${[...total.values()].reduce((a, b) => a + b, 0).toFixed(1)} ms: ${say(total)}`,
      note: 'the sum of the medians above',
    });
    const plans: Array<Map<string, number>> = [];
    for (let round = 0; round < 5; round += 1) {
      const before = threadCpuNs();
      await measured(['plan', ...project, '--json'], env, { session: 'own' });
      plans.push(threadMs(before, threadCpuNs()));
    }
    const whole = median(plans, (r) => [...r.values()].reduce((a, b) => a + b, 0));
    rows.push({
      section,
      name: `a whole plan (gds plan --json), the median of 5`,
      value: `${[...whole.values()].reduce((a, b) => a + b, 0).toFixed(1)} ms: ${say(whole)}`,
      note: `the bench's own process is the server's: its waits on the plan add a little to the request thread; ${load()}`,
    });
    return rows;
  } finally {
    replay.stdin.end();
    await close();
  }
}

async function engineRows(engine: Engine): Promise<BenchRow[]> {
  const { server, env, project, close } = await scene(engine, MODELS);
  try {
    const section = `project-scale (${engine})`;
    const apply = await measured(['apply', ...project, '--yes', '--json', '--concurrency', '8'], env);
    // The apply's baseline jobs run after it answers (a third of them at 2,000 models on PGlite): a plan
    // timed meanwhile would share the server with them.
    await jobsDone(server);
    const serverCpu = () => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1e6;
    };
    // One plan alone, timed as many times as the most plans at once (three): the ratios are against the
    // median, so one slow or fast run alone no longer moves every ratio (±0.3× run to run when timed once).
    /** The no-change plan alone, ROUNDS times, each with the server's CPU during it. */
    const plansAlone = async (): Promise<Array<Measured & { serverS: number }>> => {
      const timedRounds: Array<Measured & { serverS: number }> = [];
      for (let round = 0; round < ROUNDS; round += 1) {
        const serverBefore = serverCpu();
        const timed = await measured(['plan', ...project, '--json'], env, { session: 'own' });
        timedRounds.push({ ...timed, serverS: serverCpu() - serverBefore });
      }
      return timedRounds;
    };
    const alone = await plansAlone();
    const plan = median(alone, (m) => m.ms);
    const serverAlone = median(alone, (m) => m.serverS).serverS;
    const aloneRange = `alone ${alone.map((m) => (m.ms / 1000).toFixed(2)).join(' / ')} s, the median taken`;
    const loadAlone = load();
    // The CLI's CPU alone as the median of the runs alone (not the CPU of the run of median wall time).
    const cpuAlone = median(alone, (m) => m.cpuS ?? 0).cpuS;
    /**
     * The ratio to one alone as the product of its three parts (an identity): the floor, count / 2 × (all CPU
     * of a plan, the CLI's and the server process's) / (its wall alone), as if the plans at once packed the two
     * cores full and each cost what it costs alone; the CPU a plan costs at once against alone; and the share
     * of the two cores the plans and the server used until the slowest ended (PostgreSQL's backends are not
     * counted: they are the database's processes).
     */
    const ratioParts = (together: Measured[], server: number, slowestMs: number): string => {
      if (cpuAlone === undefined || together.some((m) => m.cpuS === undefined)) return '';
      const count = together.length;
      const perPlanAt = (together.reduce((sum, m) => sum + (m.cpuS ?? 0), 0) + server) / count;
      const perPlanAlone = cpuAlone + serverAlone;
      const floor = ((count / 2) * perPlanAlone * 1000) / plan.ms;
      const used = (count * perPlanAt * 1000) / (2 * slowestMs);
      return `; that ratio = floor ${floor.toFixed(2)}× (${count} / 2 × CPU alone / wall alone) × CPU at once / alone ${(perPlanAt / perPlanAlone).toFixed(2)} / the cores' share used ${used.toFixed(2)}`;
    };
    // Plans at once, timed in as many rounds as the plan alone: each round's slowest plan, the median round
    // taken (one round's slowest is one draw of the scheduler: ±0.1× from round to round at idle).
    const atOnce = async (count: number, session: 'own' | 'shared'): Promise<BenchRow> => {
      const rounds: Array<{ slowest: Measured; together: Measured[]; serverS: number }> = [];
      for (let round = 0; round < ROUNDS; round += 1) {
        const before = serverCpu();
        const together = await Promise.all(
          Array.from({ length: count }, () => measured(['plan', ...project, '--json'], env, { session })),
        );
        const slowest = together.reduce((a, b) => (a.ms > b.ms ? a : b));
        rounds.push({ slowest, together, serverS: serverCpu() - before });
      }
      const { slowest, together, serverS } = median(rounds, (r) => r.slowest.ms);
      const cpu = together.map((m) => m.cpuS?.toFixed(2) ?? '?').join(' / ');
      const peak = Math.max(...rounds.flatMap((r) => r.together.map((m) => m.peakMb ?? 0)));
      const each = rounds.map((r) => (r.slowest.ms / 1000).toFixed(2)).join(' / ');
      return {
        section,
        name: `${count} × gds plan --json at once, ${MODELS} models${session === 'own' ? '' : ', one session'}`,
        value: `slowest ${(slowest.ms / 1000).toFixed(2)} s (${(slowest.ms / plan.ms).toFixed(2)}× one alone; each round's slowest ${each} s, the median round taken), CLI CPU ${cpu} s (alone ${cpuAlone?.toFixed(2) ?? '?'} s), server CPU ${serverS.toFixed(2)} s (alone ${serverAlone.toFixed(2)} s), peak ${peak.toFixed(0)} MiB${ratioParts(together, serverS, slowest.ms)}`,
        note:
          session === 'own'
            ? `budget: each within 2× of one alone; each in a session of its own; ${load()}`
            : `all in one session (one script starting them): they share that session's part of the CPU; ${load()}`,
      };
    };
    const two = await atOnce(2, 'own');
    const three = await atOnce(3, 'own');
    const threeShared = await atOnce(3, 'shared');
    // The same plan once each table holds a history of gate1.yml versions: a page reads each newest by its key.
    await addGate1History(server);
    const history = await plansAlone();
    const ms = (s: number) => `${(s * 1000).toFixed(0)} ms`;
    const historyPlan = median(history, (m) => m.ms);
    return [
      {
        section,
        name: `gds apply, ${MODELS} models, first`,
        value: figure(apply),
        note: `${apply.tooMany} 429s (rate limit off); batches of 50 tables a request`,
      },
      {
        section,
        name: `gds plan --json, ${MODELS} models, no change`,
        value: `${figure(plan)}, server CPU ${serverAlone.toFixed(1)} s (${aloneRange})`,
        note: `budget: ≤ 25 requests, ≤ 5 s on PostgreSQL, ≤ 10 s on PGlite; ${loadAlone}`,
      },
      two,
      three,
      threeShared,
      {
        section,
        name: `gds plan --json, ${MODELS} models, no change, ${HISTORY_VERSIONS} gate1.yml versions a table`,
        value: `${figure(historyPlan)}, server CPU ${ms(median(history, (m) => m.serverS).serverS)} a plan (one version a table: ${ms(serverAlone)}; alone ${history.map((m) => (m.ms / 1000).toFixed(1)).join(' / ')} s, the median taken)`,
        note: `months of CI: each table's gate1.yml applied ${HISTORY_VERSIONS} times, the plan still unchanged; a page reads each table's newest by its primary key; ${load()}`,
      },
    ];
  } finally {
    await close();
  }
}

export const run: BenchModule = async () => {
  await ensureBuilt();
  const scratch = await mkdtemp(join(tmpdir(), 'gds-bench-scale-npm-'));
  try {
    cliEntry = join(await unpackedPackage(scratch), 'bin/run.js');
    const only = process.env.GDS_BENCH_ONLY;
    const engines: Engine[] = process.env.GDS_TEST_DATABASE_URL ? ['PGlite', 'PostgreSQL'] : ['PGlite'];
    // GDS_BENCH_ENGINE=PostgreSQL (or PGlite): that engine only.
    const picked = process.env.GDS_BENCH_ENGINE;
    if (picked !== undefined) engines.splice(0, engines.length, ...engines.filter((e) => e === picked));
    const rows: BenchRow[] = [];
    for (const engine of engines) {
      if (only === undefined || only === 'scale') rows.push(...(await engineRows(engine)));
      if (only === undefined || only === 'rate') rows.push(...(await rateRows(engine)));
      if (only === undefined || only === 'plan5000') rows.push(...(await planMemoryRows(engine)));
      if (only === undefined || only === 'wide') rows.push(...(await wideRows(engine)));
      if (only === 'team') rows.push(...(await teamRows(engine)));
      if (only === 'split') rows.push(...(await splitRows(engine)));
    }
    return rows;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
};
