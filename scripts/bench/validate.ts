// `gds gate validate` on a generated gate1.yml of 5,000 checks: the core alone in a fresh process
// (cold first call, with ajv compile and parser set-up, then warm), and the real command, each with peak RSS,
// on the largest such file the service takes (2,000 checks within its 262,144 characters: gds refuses more
// before parsing), and on the 5,000 checks it refuses.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchModule, BenchRow } from './types.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const node = join(root, 'node_modules/.bin/node');
const CHECKS = 5000;
/** The checks of the file the command reads: the most that fit in the service's gate1.yml limit. */
const COMMAND_CHECKS = 2000;
const COMMAND_RUNS = 5;

/** 2,000 pattern checks, 2,000 custom predicates, 1,000 field overrides, all valid. */
export function generateGate1(checks = CHECKS): string {
  const patterns = Math.round(checks * 0.4);
  const predicates = Math.round(checks * 0.4);
  const overrides = checks - patterns - predicates;
  const out: string[] = ['patternChecks:'];
  for (let i = 0; i < patterns; i++) {
    out.push(
      `  - name: pattern_${i}`,
      `    column: col_${i % 300}`,
      `    regex: '^[A-Z]{2}[0-9]{${(i % 9) + 1}}(-[a-z]+)?$'`,
      `    severity: ${i % 3 === 0 ? 'HARD_FAIL' : 'WARN'}`,
    );
  }
  out.push('customPredicates:');
  for (let i = 0; i < predicates; i++) {
    const sql =
      i % 2 === 0
        ? `amount_${i % 50} >= 0 AND status IN ('open', 'closed') AND lower(code) ~ '^[a-z]+$'`
        : `coalesce(discount, 0) BETWEEN 0 AND ${i} OR created_at > now() - interval '30 days'`;
    out.push(`  - name: predicate_${i}`, `    sql: ${sql}`, '    severity: SOFT_FAIL');
  }
  out.push('fieldOverrides:');
  for (let i = 0; i < overrides; i++) {
    out.push(`  - field: field_${i}`, '    nullRate: {warn: 0.01, fail: 0.05}');
  }
  return `${out.join('\n')}\n`;
}

const rssPreload = `data:text/javascript,import{writeFileSync}from'node:fs';process.on('exit',()=>writeFileSync(process.env.BENCH_RSS_OUT,String(process.resourceUsage().maxRSS)))`;

interface Run {
  ms: number;
  stdout: string;
  maxRssKiB: number;
}

async function runNode(args: string[], rssFile: string): Promise<Run> {
  const started = performance.now();
  const child = spawn(node, ['--import', rssPreload, ...args], {
    cwd: root,
    env: { ...process.env, BENCH_RSS_OUT: rssFile },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  await new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  const ms = performance.now() - started;
  return { ms, stdout, maxRssKiB: Number(await readFile(rssFile, 'utf8')) };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const mib = (kib: number) => `${(kib / 1024).toFixed(1)} MiB`;

const coreScript = (file: string) => `
const { readFileSync } = await import('node:fs');
const t0 = performance.now();
const gate1 = await import(${JSON.stringify(join(root, 'dist/core/gate1/index.js'))});
const loaded = performance.now();
const text = readFileSync(${JSON.stringify(file)}, 'utf8');
let r = gate1.validateGate1(text, { fileName: 'gate1.yml' });
const cold = performance.now();
const warm = [];
for (let i = 0; i < 3; i++) { const s = performance.now(); r = gate1.validateGate1(text, { fileName: 'gate1.yml' }); warm.push(performance.now() - s); }
warm.sort((a, b) => a - b);
console.log(JSON.stringify({ importMs: loaded - t0, coldMs: cold - loaded, warmMs: warm[1], diagnostics: r.diagnostics.length }));
`;

export const run: BenchModule = async () => {
  if (!existsSync(join(root, 'dist/commands/gate/validate.js'))) {
    throw new Error('dist/ is missing: run `npm run build` before the validate bench');
  }
  const dir = await mkdtemp(join(tmpdir(), 'gds-bench-validate-'));
  try {
    const file = join(dir, 'gate1.yml');
    const text = generateGate1();
    await writeFile(file, text);
    const rss = join(dir, 'rss');
    const core = await runNode(['--input-type=module', '-e', coreScript(file)], rss);
    const figures = JSON.parse(core.stdout) as {
      importMs: number;
      coldMs: number;
      warmMs: number;
      diagnostics: number;
    };
    if (figures.diagnostics !== 0)
      throw new Error(`the generated file should be valid, got ${figures.diagnostics} diagnostics`);
    const commandFile = join(dir, 'gate1-fits.yml');
    const commandText = generateGate1(COMMAND_CHECKS);
    await writeFile(commandFile, commandText);
    const commandRuns: Run[] = [];
    const refusedRuns: Run[] = [];
    for (let i = 0; i < COMMAND_RUNS + 1; i++) {
      commandRuns.push(
        await runNode([join(root, 'bin/run.js'), 'gate', 'validate', '-f', commandFile, '--json'], rss),
      );
      refusedRuns.push(
        await runNode([join(root, 'bin/run.js'), 'gate', 'validate', '-f', file, '--json'], rss),
      );
    }
    const measured = commandRuns.slice(1); // the first run warms the file cache
    const size = `${CHECKS} checks, ${(text.length / 1024).toFixed(0)} KiB`;
    const commandSize = `${COMMAND_CHECKS} checks, ${(commandText.length / 1024).toFixed(0)} KiB`;
    const rows: BenchRow[] = [
      {
        section: 'validate',
        name: 'core: import gate1 modules',
        value: `${figures.importMs.toFixed(0)} ms`,
        note: 'ajv, yaml, libpg-query (PostgreSQL grammar for the predicates)',
      },
      {
        section: 'validate',
        name: 'core: validateGate1, first call',
        value: `${figures.coldMs.toFixed(0)} ms`,
        note: `${size}; ajv compile included`,
      },
      {
        section: 'validate',
        name: 'core: validateGate1, warm',
        value: `${figures.warmMs.toFixed(0)} ms`,
        note: 'median of 3',
      },
      { section: 'validate', name: 'core: peak RSS', value: mib(core.maxRssKiB), note: 'fresh node process' },
      {
        section: 'validate',
        name: 'gds gate validate --json',
        value: `${median(measured.map((r) => r.ms)).toFixed(0)} ms`,
        note: `${commandSize}; median of ${COMMAND_RUNS}, node bin/run.js, wall`,
      },
      {
        section: 'validate',
        name: 'gds gate validate, over the limit',
        value: `${median(refusedRuns.slice(1).map((r) => r.ms)).toFixed(0)} ms`,
        note: `${size}: exit 2 naming the 262,144-character limit, before parsing`,
      },
      {
        section: 'validate',
        name: 'gds gate validate peak RSS',
        value: mib(Math.max(...measured.map((r) => r.maxRssKiB))),
        note: 'max over runs',
      },
    ];
    return rows;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
};
