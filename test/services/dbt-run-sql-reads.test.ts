// target/run's SQL, read for a model the last dbt command (dbt compile) only compiled: only files dbt wrote
// inside target/run count, and one gds cannot read leaves the catalog judged without it, the project read all
// the same. The real jaffle-shop project (../shared/fixtures, copied), its stg_orders compiled without
// order_date after dbt docs generate (the catalog still lists it) and the last run_results.json a dbt compile.
import { cp, mkdir, mkdtemp, readFile, rm, stat, symlink, unlink, utimes, writeFile } from 'node:fs/promises';
import type * as Fs from 'node:fs';
import type * as FsPromises from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { sharedFixturesDir } from '../helpers/fixtures.js';
import { needs, noSharedFixtures } from '../helpers/skip.js';
import { loadDbtProject } from '../../src/services/dbt-project.js';

/** Run files whose open fails as a file of another owner (mode 600) does for a user: EACCES. */
const unreadable = vi.hoisted(() => new Set<string>());
vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof FsPromises>();
  const refuse = (path: unknown) => {
    if (typeof path === 'string' && unreadable.has(path))
      throw Object.assign(new Error(`EACCES: permission denied, open '${path}'`), { code: 'EACCES' });
  };
  return {
    ...real,
    readFile: async (...args: Parameters<typeof real.readFile>) => {
      refuse(args[0]);
      return real.readFile(...args);
    },
    open: async (...args: Parameters<typeof real.open>) => {
      refuse(args[0]);
      return real.open(...args);
    },
  };
});

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof Fs>();
  const open = (path: unknown, ...rest: unknown[]) => {
    const done = rest.at(-1) as (error: Error | null) => void;
    if (typeof path === 'string' && unreadable.has(path))
      return done(Object.assign(new Error(`EACCES: permission denied, open '${path}'`), { code: 'EACCES' }));
    return (real.open as (...args: unknown[]) => void)(path, ...rest);
  };
  return { ...real, open, default: { ...real, open } };
});

const JAFFLE = join(sharedFixturesDir, 'real/dbt-projects/manoty_jaffle_duckdb');
const STG_ORDERS = 'model.jaffle_dbt.stg_orders';

let dir: string;
let project: string;
const target = (name: string) => join(project, 'target', name);
const runFile = () => target('run/jaffle_dbt/models/staging/stg_orders.sql');

beforeEach(async () => {
  unreadable.clear();
  dir = await mkdtemp(join(tmpdir(), 'gds-run-sql-'));
  project = join(dir, 'jaffle');
  await cp(JAFFLE, project, { recursive: true });
  // dbt compile of stg_orders without order_date: a new manifest, a run_results.json of the compile.
  const manifest = JSON.parse(await readFile(target('manifest.json'), 'utf8')) as {
    metadata: { generated_at: string };
    nodes: Record<string, { compiled_code: string }>;
  };
  const node = manifest.nodes[STG_ORDERS];
  if (node === undefined) throw new Error('the fixture has no stg_orders');
  node.compiled_code = node.compiled_code.replace(/\n\s*order_date,/, '');
  const now = new Date().toISOString();
  manifest.metadata.generated_at = now;
  const run = JSON.parse(await readFile(target('run_results.json'), 'utf8')) as {
    metadata: { generated_at: string };
    args: { which: string };
  };
  run.metadata.generated_at = now;
  run.args.which = 'compile';
  await writeFile(target('manifest.json'), JSON.stringify(manifest));
  await writeFile(target('run_results.json'), JSON.stringify(run));
  // A build of the new SQL, as a dbt run of it writes its DDL (the file is replaced below).
  const ddl = `create view "jaffle_dbt"."main"."stg_orders__dbt_tmp" as (\n${node.compiled_code}\n);`;
  await writeFile(join(dir, 'elsewhere.sql'), ddl);
  await writeFile(runFile(), ddl);
});

afterEach(() => rm(dir, { recursive: true, force: true }));

async function stgOrders() {
  const loaded = await loadDbtProject(project, {});
  const declaration = loaded.declarations.find((d) => d.name === 'stg_orders');
  return {
    columns: declaration?.columns.map((c) => c.name.toLowerCase()),
    warnings: loaded.warnings.filter((w) => w.startsWith(STG_ORDERS)),
  };
}

describe("target/run's SQL of a model dbt compile only compiled", needs(noSharedFixtures), () => {
  it('a build of the new SQL there counts: its columns are the SQL’s (the case the reader is for)', async () => {
    const read = await stgOrders();
    expect(read.columns).not.toContain('order_date');
    expect(read.warnings.join('\n')).toContain('target/run holds its build of this SQL');
  });

  it('a run file linked to a file outside target/run is not read: the catalog is kept', async () => {
    await unlink(runFile());
    await symlink(join(dir, 'elsewhere.sql'), runFile());
    const read = await stgOrders();
    expect(read.columns).toContain('order_date');
    expect(read.warnings.join('\n')).toContain('not rebuilt since the catalog');
  });

  it('a run file gds cannot read is left out: the project is read, the catalog kept', async () => {
    unreadable.add(runFile());
    const read = await stgOrders();
    expect(read.columns).toContain('order_date');
    expect(read.warnings.join('\n')).toContain('not rebuilt since the catalog');
  });
});

/** dbt 1.x's file log of a dbt run of stg_orders the warehouse refused, after `filler` bytes of older lines. */
async function writeFailedRunLog(filler = 0): Promise<string> {
  const line = (msg: string, level = 'debug') =>
    `\u001b[0m10:00:01.000001 [${level.padEnd(5)}] [Thread-1 (]: ${msg}`;
  const older = line('Began running node model.jaffle_dbt.customers ' + 'x'.repeat(200));
  const log = join(project, 'logs', 'dbt.log');
  await mkdir(join(project, 'logs'), { recursive: true });
  await writeFile(
    log,
    [
      ...Array.from({ length: Math.ceil(filler / (older.length + 1)) }, () => older),
      line(`Writing runtime sql for node "${STG_ORDERS}"`),
      line('1 of 1 ERROR creating sql view model main.stg_orders ..... [ERROR in 0.02s]', 'error'),
      line(`Finished running node ${STG_ORDERS}`),
      '',
    ].join('\n'),
  );
  return log;
}

describe("logs/dbt.log: whether the run that wrote target/run's file failed", needs(noSharedFixtures), () => {
  it('a log that says the run failed keeps the catalog', async () => {
    await writeFailedRunLog();
    const read = await stgOrders();
    expect(read.columns).toContain('order_date');
    expect(read.warnings.join('\n')).toContain('of a dbt run that failed');
  });

  it('a log last written before the run file is of older runs (the run logged elsewhere): the SQL counts', async () => {
    const log = await writeFailedRunLog();
    const written = (await stat(runFile())).mtime;
    const before = new Date(written.getTime() - 3_600_000);
    await utimes(log, before, before);
    const read = await stgOrders();
    expect(read.columns).not.toContain('order_date');
    expect(read.warnings.join('\n')).toContain('target/run holds its build of this SQL');
  });

  it('a log larger than gds reads whole (no rotation) is read from its end', async () => {
    await writeFailedRunLog(40 * 1024 * 1024);
    const read = await stgOrders();
    expect(read.columns).toContain('order_date');
    expect(read.warnings.join('\n')).toContain('of a dbt run that failed');
  });
});
