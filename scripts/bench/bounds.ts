// Nothing quadratic and nothing unbounded in what gds reads: a 30,000-line
// view read by the SQL reader (in process) and by `gds push` (refused by the bounds), the refusals of
// the inputs, and `gate diff` of 10,000 reordered checks (in process; the command refuses them as
// `gate validate` does, and diffs the 2,500 that fit).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArtifact } from '../../src/core/artifacts/index.js';
import { diffGateTexts, loadGateDiffLibraries } from '../../src/core/gate-diff.js';
import { median } from './lib/measure.js';
import type { BenchModule, BenchRow } from './types.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const node = join(root, 'node_modules/.bin/node');
const RUNS = 3;

const view = (columns: number) =>
  `CREATE VIEW analytics.wide AS SELECT\n${Array.from({ length: columns }, (_, i) => `  coalesce(c${i}, 0) AS col_${i}`).join(',\n')}\nFROM raw.t\n`;
const check = (i: number) =>
  `  - name: check_${String(i).padStart(5, '0')}\n    column: email\n    regex: ^[a-z]+$\n    severity: WARN\n`;
const checks = (order: number[]) => `patternChecks:\n${order.map(check).join('')}`;

/** Median wall time of the CLI (node bin/run.js) with `args`, and the exit code of the last run. */
function cli(args: string[], env: NodeJS.ProcessEnv): { ms: number; code: number | null } {
  const times: number[] = [];
  let code: number | null = null;
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    code = spawnSync(node, [join(root, 'bin/run.js'), ...args], { env, stdio: 'ignore' }).status;
    times.push(performance.now() - started);
  }
  return { ms: median(times), code };
}

/** Medians of wall time, CPU time (user+sys) and peak memory of a command under GNU time. */
function timedCli(
  command: readonly string[],
  env: NodeJS.ProcessEnv,
): { ms: number; cpuMs: number; peakMiB: number; code: number | null } {
  const walls: number[] = [];
  const cpus: number[] = [];
  const peaks: number[] = [];
  let code: number | null = null;
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    const result = spawnSync('/usr/bin/time', ['-f', 'gds-bench %U %S %M', ...command], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
      encoding: 'utf8',
    });
    walls.push(performance.now() - started);
    code = result.status;
    const [, user = 'NaN', sys = 'NaN', peak = 'NaN'] =
      /gds-bench (\S+) (\S+) (\d+)\s*$/.exec(result.stderr) ?? [];
    cpus.push((Number(user) + Number(sys)) * 1000);
    peaks.push(Number(peak) / 1024);
  }
  return { ms: median(walls), cpuMs: median(cpus), peakMiB: median(peaks), code };
}

async function inProcessMs(work: () => Promise<unknown> | unknown): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    await work();
    times.push(performance.now() - started);
  }
  return median(times);
}

export const run: BenchModule = async () => {
  execFileSync(node, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: root,
  });
  const dir = await mkdtemp(join(tmpdir(), 'gds-bench-bounds-'));
  const env = { ...process.env, GDS_CONFIG_DIR: join(dir, 'config'), NO_COLOR: '1' };
  const rows: BenchRow[] = [];
  const section = 'bounds';
  const ms = (value: number) => `${value.toFixed(0)} ms`;
  try {
    const long = view(30_000);
    const widest = view(1_600);
    const ids = Array.from({ length: 10_000 }, (_, i) => i);
    const before = checks(ids);
    const after = checks([...ids].reverse());
    // The most checks a gate1.yml of 262,144 characters holds: what gds diffs (the 10,000 are refused, as validate does).
    const fitting = Array.from({ length: 2_500 }, (_, i) => i);
    await Promise.all([
      writeFile(join(dir, 'before-fit.yml'), checks(fitting)),
      writeFile(join(dir, 'after-fit.yml'), checks([...fitting].reverse())),
      writeFile(join(dir, 'long.sql'), long),
      writeFile(join(dir, 'wide.sql'), view(50_000).replaceAll('coalesce(', '(').replaceAll(', 0)', ')')),
      writeFile(join(dir, 'before.yml'), before),
      writeFile(join(dir, 'after.yml'), after),
      writeFile(
        join(dir, 'mapping.yml'),
        `table: t\nsource: s.t\ncolumns:\n  - name: id\nmeta:\n${Array.from({ length: 12_000 }, (_, i) => `  key_number_${i}: a value\n`).join('')}`,
      ),
      writeFile(join(dir, 'gate1-big.yml'), checks(Array.from({ length: 14_000 }, (_, i) => i))),
    ]);

    rows.push({
      section,
      name: 'SQL reader: 30,000-line view',
      value: ms(await inProcessMs(() => parseArtifact({ fileName: 'long.sql', content: long }))),
      note: `${(long.length / 1024).toFixed(0)} KiB, 30,000 columns, warm, in process (was 147 s); budget 2 s`,
    });
    rows.push({
      section,
      name: 'SQL reader: 1,600-column view',
      value: ms(await inProcessMs(() => parseArtifact({ fileName: 'wide.sql', content: widest }))),
      note: 'the widest view the bounds let through, warm, in process',
    });
    const libraries = await loadGateDiffLibraries();
    const semanticMs = await inProcessMs(() =>
      diffGateTexts(libraries, { name: 'a', text: before }, { name: 'b', text: after }, { semantic: true }),
    );
    rows.push({
      section,
      name: 'gate diff core: 10,000 reordered checks',
      value: ms(
        await inProcessMs(() =>
          diffGateTexts(
            libraries,
            { name: 'a', text: before },
            { name: 'b', text: after },
            { semantic: false },
          ),
        ),
      ),
      note: `${(before.length / 1024).toFixed(0)} KiB a side, text mode, in process (was > 120 s); budget 2 s; --semantic ${ms(semanticMs)} (YAML parse and print of both sides)`,
    });
    const base = ['--token', 'cli_bench', '--base', 'http://127.0.0.1:9'];
    const version = cli(['--version'], env);
    rows.push({ section, name: 'gds --version', value: ms(version.ms), note: 'start-up, for scale' });
    for (const [name, args, was] of [
      ['gds push 30,000-line view', ['push', join(dir, 'long.sql'), ...base], '147 s'],
      ['gds push 50,000-column view', ['push', join(dir, 'wide.sql'), ...base], '> 150 s'],
      ['gds push 12,000-key YAML mapping', ['push', join(dir, 'mapping.yml'), ...base], '19 s'],
      ['gds gate validate 1.3 MB gate1.yml', ['gate', 'validate', '-f', join(dir, 'gate1-big.yml')], '8 s'],
      ['gds push /dev/zero symlink', ['push', join(dir, 'zero.sql'), ...base], '673 MB read'],
    ] as const) {
      if (name.includes('/dev/zero')) await symlink('/dev/zero', join(dir, 'zero.sql'));
      const result = cli([...args], env);
      rows.push({
        section,
        name,
        value: ms(result.ms),
        note: `exit ${result.code}, refused naming the limit before parsing (was ${was}); median of ${RUNS}, wall`,
      });
    }
    const over = cli(
      ['gate', 'diff', '-f', join(dir, 'after.yml'), '--against', join(dir, 'before.yml')],
      env,
    );
    rows.push({
      section,
      name: 'gds gate diff: 10,000 reordered checks',
      value: ms(over.ms),
      note: `exit ${over.code}: ${(after.length / 1000).toFixed(0)}k characters, refused as gate validate refuses it; median of ${RUNS}, wall`,
    });
    const diffArgs = [
      'gate',
      'diff',
      '-f',
      join(dir, 'after-fit.yml'),
      '--against',
      join(dir, 'before-fit.yml'),
    ];
    const diff = cli(diffArgs, env);
    rows.push({
      section,
      name: 'gds gate diff: 2,500 reordered checks',
      value: ms(diff.ms),
      note: `exit ${diff.code} (different), text mode, the most checks within the bound; median of ${RUNS}, wall; budget 2 s`,
    });
    // --semantic reads and prints both sides as YAML: on a loaded machine its CPU time is the steadier figure.
    for (const [label, command] of [
      ['npm entry', [node, join(root, 'bin/run.js')]],
      ['dist/gds', [join(root, 'dist/gds')]],
    ] as const) {
      if (!existsSync(command[0])) {
        rows.push({
          section,
          name: `gds gate diff --semantic (${label})`,
          value: 'skipped',
          note: 'not built',
        });
        continue;
      }
      const semantic = timedCli([...command, ...diffArgs, '--semantic'], env);
      rows.push({
        section,
        name: `gds gate diff --semantic: 2,500 reordered checks (${label})`,
        value: ms(semantic.ms),
        note: `exit ${semantic.code} (different), cpu ${semantic.cpuMs.toFixed(0)} ms, peak ${semantic.peakMiB.toFixed(0)} MiB; median of ${RUNS}, wall; budget 2 s`,
      });
    }
    return rows;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};
