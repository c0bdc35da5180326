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

/**
 * dbt 1.x's file log of `dbt run -s stg_orders` on DuckDB (the default view materialization: BEGIN, the DDL,
 * the renames, COMMIT, the backup's drop, then the post-hooks run outside the transaction), building `ddl`:
 * `ok`; `refused` (the warehouse refuses the DDL: rolled back, nothing replaced); `hook-in-transaction` (a
 * post-hook fails before the COMMIT: rolled back too); `hook-after-commit` (a post-hook with transaction:
 * false fails after the COMMIT: the view was replaced).
 */
function dbtRun(
  ddl: string,
  outcome: 'ok' | 'refused' | 'hook-in-transaction' | 'hook-after-commit',
  at = '10:00:01',
): string[] {
  let n = 0;
  const line = (msg: string, level = 'debug') =>
    `\u001b[0m${at}.${String(++n).padStart(6, '0')} [${level.padEnd(5)}] [Thread-1 (]: ${msg}`;
  const comment = `/* {"app": "dbt", "dbt_version": "1.9.4", "profile_name": "jaffle_dbt", "target_name": "dev", "node_id": "${STG_ORDERS}"} */`;
  const query = (sql: string, status = 'OK') => [
    line(`Using duckdb connection "${STG_ORDERS}"`),
    line(`On ${STG_ORDERS}: ${comment}`),
    sql,
    ...(status === '' ? [] : [line(`SQL status: ${status} in 0.001 seconds`)]),
  ];
  const rollback = [line(`On ${STG_ORDERS}: ROLLBACK`)];
  const failed = (error: string) => [
    line(`duckdb error: ${error}`),
    ...(outcome === 'hook-after-commit' ? [] : rollback),
    line(`Runtime Error in model stg_orders (models/staging/stg_orders.sql)\n  ${error}`),
    line(
      '1 of 1 ERROR creating sql view model main.stg_orders ..................... [\u001b[31mERROR\u001b[0m in 0.03s]',
      'error',
    ),
  ];
  const hook = query('\n  insert into audit_log values (current_timestamp)', '');
  const missing = 'Catalog Error: Table with name audit_log does not exist!';
  const renamed = [
    ...query('alter view "jaffle_dbt"."main"."stg_orders" rename to "stg_orders__dbt_backup"'),
    ...query('alter view "jaffle_dbt"."main"."stg_orders__dbt_tmp" rename to "stg_orders"'),
  ];
  const committed = [
    line(`On ${STG_ORDERS}: COMMIT`),
    line(`Using duckdb connection "${STG_ORDERS}"`),
    line(`On ${STG_ORDERS}: COMMIT`),
    line('SQL status: OK in 0.001 seconds'),
    ...query('drop view if exists "jaffle_dbt"."main"."stg_orders__dbt_backup" cascade'),
  ];
  return [
    line(`Began running node ${STG_ORDERS}`),
    line('1 of 1 START sql view model main.stg_orders ...................... [RUN]', 'info'),
    line(`Began compiling node ${STG_ORDERS}`),
    line(`Writing injected SQL for node "${STG_ORDERS}"`),
    line(`Began executing node ${STG_ORDERS}`),
    line(`Writing runtime sql for node "${STG_ORDERS}"`),
    line(`Using duckdb connection "${STG_ORDERS}"`),
    line(`On ${STG_ORDERS}: BEGIN`),
    line('SQL status: OK in 0.000 seconds'),
    ...(outcome === 'refused'
      ? [...query(ddl, ''), ...failed('Binder Error: Referenced column "order_date" not found')]
      : outcome === 'hook-in-transaction'
        ? [...query(ddl), ...renamed, ...hook, ...failed(missing)]
        : outcome === 'hook-after-commit'
          ? [
              ...query(ddl),
              ...renamed,
              ...committed,
              ...query('\n        commit;'),
              ...hook,
              ...failed(missing),
            ]
          : [
              ...query(ddl),
              ...renamed,
              ...committed,
              line(
                '1 of 1 OK created sql view model main.stg_orders ................ [\u001b[32mOK\u001b[0m in 0.05s]',
                'info',
              ),
            ]),
    line(`Finished running node ${STG_ORDERS}`),
  ];
}

/** dbt's file log `lines` (each a run of dbtRun), written at `path` of the copied project. */
async function writeLog(path: string, runs: string[][]): Promise<void> {
  await mkdir(join(project, path, '..'), { recursive: true });
  await writeFile(join(project, path), [...runs.flat(), ''].join('\n'));
}

describe('a dbt.log gds cannot read', needs(noSharedFixtures), () => {
  const loaded = async () => {
    const read = await loadDbtProject(project, {});
    const declaration = read.declarations.find((d) => d.name === 'stg_orders');
    return { columns: declaration?.columns.map((c) => c.name.toLowerCase()), warnings: read.warnings };
  };

  it("is said in a warning (which file, why, what gds took), and target/run's SQL counts", async () => {
    unreadable.add(await writeFailedRunLog());
    const read = await loaded();
    expect(read.columns).not.toContain('order_date');
    expect(read.warnings).toContainEqual(
      "logs/dbt.log is not read (permission denied): whether a dbt run that wrote a model's target/run SQL since catalog.json failed is not known, so gds takes each such SQL as built",
    );
  });

  it('says nothing where no answer depends on it: target/run holds no build of the model’s SQL now', async () => {
    // The run file is the catalog's build (the fixture's, of the SQL before): whatever the log says of the run
    // that wrote it, the catalog's columns stay, so the log is not asked.
    await writeFile(
      runFile(),
      await readFile(join(JAFFLE, 'target/run/jaffle_dbt/models/staging/stg_orders.sql'), 'utf8'),
    );
    unreadable.add(await writeFailedRunLog());
    const read = await loaded();
    expect(read.columns).toContain('order_date');
    expect(read.warnings.join('\n')).not.toContain('dbt.log');
    // A directory there is the same: nothing to say.
    unreadable.clear();
    await rm(join(project, 'logs'), { recursive: true });
    await mkdir(join(project, 'logs', 'dbt.log'), { recursive: true });
    expect((await loaded()).warnings.join('\n')).not.toContain('dbt.log');
  });

  it('a directory named dbt.log is said so too', async () => {
    await mkdir(join(project, 'logs', 'dbt.log'), { recursive: true });
    const read = await loaded();
    expect(read.columns).not.toContain('order_date');
    expect(read.warnings).toContainEqual(
      expect.stringMatching(/^logs\/dbt\.log is not read \(it is a directory\): /),
    );
  });

  it('no dbt.log at all (dbt logs elsewhere) is said nothing of', async () => {
    const read = await loaded();
    expect(read.columns).not.toContain('order_date');
    expect(read.warnings.join('\n')).not.toContain('dbt.log');
  });

  // A file where the log's folder would be: dbt could not log there (it logged elsewhere), there is no log.
  it('a file named logs, where the folder would be, is no log at all: said nothing of', async () => {
    await writeFile(join(project, 'logs'), 'not a folder\n');
    const read = await loaded();
    expect(read.columns).not.toContain('order_date');
    expect(read.warnings.join('\n')).not.toContain('dbt.log');
  });
});

describe(
  'the runs dbt logged of the model, after a dbt run that wrote its target/run file',
  needs(noSharedFixtures),
  () => {
    it('a failed re-run of the same SQL does not hide an earlier run that rebuilt it: the SQL counts', async () => {
      const ddl = await readFile(runFile(), 'utf8');
      await writeLog('logs/dbt.log', [dbtRun(ddl, 'ok'), dbtRun(ddl, 'refused', '10:05:00')]);
      const read = await stgOrders();
      expect(read.columns).not.toContain('order_date');
      expect(read.warnings.join('\n')).toContain('target/run holds its build of this SQL');
    });

    it('an earlier rebuild of other SQL (the catalog’s) does not count: the catalog is kept', async () => {
      const ddl = await readFile(runFile(), 'utf8');
      const older = await readFile(
        join(JAFFLE, 'target/run/jaffle_dbt/models/staging/stg_orders.sql'),
        'utf8',
      );
      await writeLog('logs/dbt.log', [dbtRun(older, 'ok'), dbtRun(ddl, 'refused', '10:05:00')]);
      const read = await stgOrders();
      expect(read.columns).toContain('order_date');
      expect(read.warnings.join('\n')).toContain('of a dbt run that failed (logs/dbt.log says so');
    });

    it("the log's last run of the model failed on other SQL (the file was since written by a run logged elsewhere): it tells nothing", async () => {
      // dbt run -s stg_orders of the catalog's SQL failed into logs/; the SQL changed, a dbt run --log-path
      // /tmp/x built it (target/run's file), then a dbt run of other models logged to logs/ again.
      const older = await readFile(
        join(JAFFLE, 'target/run/jaffle_dbt/models/staging/stg_orders.sql'),
        'utf8',
      );
      await writeLog('logs/dbt.log', [dbtRun(older, 'refused')]);
      const read = await stgOrders();
      expect(read.columns).not.toContain('order_date');
      expect(read.warnings.join('\n')).not.toContain('of a dbt run that failed');
    });

    it('a post-hook that failed after the COMMIT is a rebuild (the view was replaced): the SQL counts', async () => {
      await writeLog('logs/dbt.log', [dbtRun(await readFile(runFile(), 'utf8'), 'hook-after-commit')]);
      const read = await stgOrders();
      expect(read.columns).not.toContain('order_date');
      expect(read.warnings.join('\n')).toContain('target/run holds its build of this SQL');
    });

    it('a post-hook that failed inside the transaction (rolled back) is no rebuild: the catalog is kept', async () => {
      await writeLog('logs/dbt.log', [dbtRun(await readFile(runFile(), 'utf8'), 'hook-in-transaction')]);
      const read = await stgOrders();
      expect(read.columns).toContain('order_date');
      expect(read.warnings.join('\n')).toContain('of a dbt run that failed');
    });
  },
);

describe("where dbt logs: dbt_project.yml's log-path, DBT_LOG_PATH", needs(noSharedFixtures), () => {
  const withLogPath = async (folder: string) => {
    const path = join(project, 'dbt_project.yml');
    await writeFile(path, `${await readFile(path, 'utf8')}\nlog-path: "${folder}"\n`);
  };
  const failedRun = async () => [dbtRun(await readFile(runFile(), 'utf8'), 'refused')];

  it('log-path: (relative to the project folder) is where the failed run is read: the catalog is kept', async () => {
    await withLogPath('../dbt-logs');
    await writeLog('../dbt-logs/dbt.log', await failedRun());
    const read = await stgOrders();
    expect(read.columns).toContain('order_date');
    // Outside the project, the log is named by its absolute path.
    const log = join(dir, 'dbt-logs', 'dbt.log');
    expect(read.warnings.join('\n')).toContain(`of a dbt run that failed (${log} says so`);
  });

  it('an absolute DBT_LOG_PATH or log-path: is named absolute outside the project, relative inside it', async () => {
    const outside = join(dir, 'ci', 'logs');
    await writeLog('../ci/logs/dbt.log', await failedRun());
    const named = async (env: NodeJS.ProcessEnv) =>
      (await loadDbtProject(project, {}, { env })).warnings.join('\n');
    expect(await named({ DBT_LOG_PATH: outside })).toContain(
      `of a dbt run that failed (${join(outside, 'dbt.log')} says so`,
    );
    await writeLog('ci-logs/dbt.log', await failedRun());
    expect(await named({ DBT_LOG_PATH: join(project, 'ci-logs') })).toContain(
      'of a dbt run that failed (ci-logs/dbt.log says so',
    );
    await withLogPath(outside);
    expect(await named({})).toContain(`of a dbt run that failed (${join(outside, 'dbt.log')} says so`);
  });

  it('DBT_LOG_PATH (relative to the project folder too) beats log-path:', async () => {
    await withLogPath('elsewhere');
    await writeLog('ci-logs/dbt.log', await failedRun());
    await writeLog('elsewhere/dbt.log', [dbtRun(await readFile(runFile(), 'utf8'), 'ok')]);
    const loaded = await loadDbtProject(project, {}, { env: { DBT_LOG_PATH: 'ci-logs' } });
    const declaration = loaded.declarations.find((d) => d.name === 'stg_orders');
    expect(declaration?.columns.map((c) => c.name.toLowerCase())).toContain('order_date');
    expect(loaded.warnings.join('\n')).toContain('of a dbt run that failed (ci-logs/dbt.log says so');
    // Unset (or empty, as dbt takes it), log-path: decides: its run built the SQL.
    const unset = await loadDbtProject(project, {}, { env: { DBT_LOG_PATH: '' } });
    const columns = unset.declarations.find((d) => d.name === 'stg_orders')?.columns.map((c) => c.name);
    expect(columns?.map((c) => c.toLowerCase())).not.toContain('order_date');
  });
});

describe(
  'a warehouse whose DDL commits itself (the manifest names Snowflake): no COMMIT follows the DDL',
  needs(noSharedFixtures),
  () => {
    /** The copied project as dbt-snowflake builds stg_orders: `create or replace view` of the relation itself. */
    async function onSnowflake(adapter: string): Promise<string> {
      const manifest = JSON.parse(await readFile(target('manifest.json'), 'utf8')) as {
        metadata: { adapter_type: string };
      };
      manifest.metadata.adapter_type = adapter;
      await writeFile(target('manifest.json'), JSON.stringify(manifest));
      const ddl = (await readFile(runFile(), 'utf8')).replace(
        /^create view "jaffle_dbt"\."main"\."stg_orders__dbt_tmp"/,
        'create or replace view "jaffle_dbt"."main"."stg_orders"',
      );
      await writeFile(runFile(), ddl);
      return ddl;
    }
    /** dbt-snowflake's log: the DDL done (its status), then an in-transaction post-hook fails before the COMMIT. */
    const hookFailed = (ddl: string) => {
      let n = 0;
      const line = (msg: string, level = 'debug') =>
        `\u001b[0m10:00:01.${String(++n).padStart(6, '0')} [${level.padEnd(5)}] [Thread-1 (]: ${msg}`;
      return [
        line(`Began running node ${STG_ORDERS}`),
        line(`Writing runtime sql for node "${STG_ORDERS}"`),
        line(`On ${STG_ORDERS}: /* {"app": "dbt"} */`),
        ddl,
        line('SQL status: SUCCESS 1 in 0.412 seconds'),
        line(`On ${STG_ORDERS}: /* {"app": "dbt"} */`),
        'insert into audit_log values (current_timestamp)',
        line(`Snowflake adapter: Snowflake error: 002003 (42S02): Table 'AUDIT_LOG' does not exist`),
        line(`On ${STG_ORDERS}: ROLLBACK`),
        line('1 of 1 ERROR creating sql view model main.stg_orders ........ [ERROR in 0.61s]', 'error'),
        line(`Finished running node ${STG_ORDERS}`),
      ];
    };

    it('a post-hook that failed after the DDL was done is a rebuild (the view was replaced): the SQL counts', async () => {
      const ddl = await onSnowflake('snowflake');
      await writeLog('logs/dbt.log', [hookFailed(ddl)]);
      const read = await stgOrders();
      expect(read.columns).not.toContain('order_date');
      expect(read.warnings.join('\n')).toContain('target/run holds its build of this SQL');
    });

    it("a DDL Snowflake refused is no rebuild, though dbt logs the connection's ROLLBACK and Close after it", async () => {
      const ddl = await onSnowflake('snowflake');
      let n = 0;
      const line = (msg: string, level = 'debug') =>
        `\u001b[0m10:00:01.${String(++n).padStart(6, '0')} [${level.padEnd(5)}] [Thread-1 (]: ${msg}`;
      // dbt releases the model's connection (ROLLBACK where a transaction is open, then Close) before it logs
      // the result.
      const refused = [
        line(`Began running node ${STG_ORDERS}`),
        line(`Writing runtime sql for node "${STG_ORDERS}"`),
        line(`On ${STG_ORDERS}: /* {"app": "dbt"} */`),
        ddl,
        line(`Snowflake adapter: Snowflake error: 002003 (42S02): Object 'RAW_ORDERS' does not exist`),
        line(`On ${STG_ORDERS}: ROLLBACK`),
        line(`On ${STG_ORDERS}: Close`),
        line('1 of 1 ERROR creating sql view model main.stg_orders ........ [ERROR in 0.61s]', 'error'),
        line(`Finished running node ${STG_ORDERS}`),
      ];
      await writeLog('logs/dbt.log', [refused]);
      const read = await stgOrders();
      expect(read.columns).toContain('order_date');
      expect(read.warnings.join('\n')).toContain('of a dbt run that failed');
    });

    it('the same log on a warehouse whose DDL the ROLLBACK undoes (DuckDB) is no rebuild: the catalog is kept', async () => {
      const ddl = await onSnowflake('duckdb');
      await writeLog('logs/dbt.log', [hookFailed(ddl)]);
      const read = await stgOrders();
      expect(read.columns).toContain('order_date');
      expect(read.warnings.join('\n')).toContain('of a dbt run that failed');
    });
  },
);
