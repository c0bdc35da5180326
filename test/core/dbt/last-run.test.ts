// A catalog.json older than manifest.json, judged by the project's run_results.json: a view or table model
// whose compiled SQL selects other columns than the catalog lists takes the SQL's columns only when the last
// dbt command rebuilt it after the catalog was written; after dbt compile, or a run that failed or skipped it,
// the warehouse still has the catalog's columns, and they are declared with a warning that says so.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { declareDbtProject, prepareDbtReader } from '../../../src/core/dbt/project.js';
import { loggedRunFailures } from '../../../src/core/dbt/last-run.js';
import type { DbtReader } from '../../../src/core/dbt/project.js';
import { sharedFixturesDir } from '../../helpers/fixtures.js';
import { needs, noSharedFixtures } from '../../helpers/skip.js';
import { catalog, manifest, model } from './helpers.js';

let dbtReader: DbtReader;
beforeAll(async () => {
  dbtReader = await prepareDbtReader();
});

const CATALOG_AT = '2026-01-30T09:00:00Z';
const MANIFEST_AT = '2026-02-01T10:00:00Z';

/** A run_results.json (v6) of `dbt <which>` written at `generatedAt`, each node's result with its status. */
function runResults(which: string | undefined, generatedAt: string, statuses: Record<string, string>) {
  return {
    metadata: {
      dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v6.json',
      dbt_version: '1.10.0',
      generated_at: generatedAt,
    },
    ...(which === undefined ? {} : { args: { which } }),
    elapsed_time: 1.5,
    results: Object.entries(statuses).map(([id, status]) => ({
      unique_id: id,
      status,
      message: status === 'success' && which !== 'compile' ? 'CREATE VIEW' : null,
      adapter_response: status === 'success' && which !== 'compile' ? { _message: 'CREATE VIEW' } : {},
      timing: [],
    })),
  };
}

// orders now selects customer_id, not order_date; the catalog (from before) lists order_id and order_date.
const project = () => {
  const m = manifest(
    model('orders', { compiled_code: 'select 1::bigint as order_id, 2::integer as customer_id' }),
  );
  (m['metadata'] as Record<string, unknown>)['generated_at'] = MANIFEST_AT;
  return m;
};
const olderCatalog = catalog(CATALOG_AT, { 'model.shop.orders': { order_id: 'BIGINT', order_date: 'DATE' } });
const declare = (runResultsJson?: unknown) =>
  declareDbtProject(
    {
      manifest: project(),
      catalog: olderCatalog,
      ...(runResultsJson === undefined ? {} : { runResults: runResultsJson }),
    },
    {},
    dbtReader,
  );
const names = (p: ReturnType<typeof declare>) => p.declarations[0]?.columns.map((c) => c.name);

describe('an older catalog judged by run_results.json', () => {
  it('keeps the catalog after dbt compile, with a warning that the model was not rebuilt since', () => {
    const compiled = declare(runResults('compile', MANIFEST_AT, { 'model.shop.orders': 'success' }));
    expect(names(compiled)).toEqual(['order_id', 'order_date']);
    expect(compiled.declarations[0]?.columns.map((c) => c.type)).toEqual(['BIGINT', 'DATE']);
    expect(compiled.warnings).toEqual([
      expect.stringMatching(
        /^model\.shop\.orders: catalog\.json \(2026-01-30T09:00:00Z\) is older than manifest\.json .*no longer order_date; new customer_id.*not rebuilt since the catalog: .*dbt compile/,
      ),
    ]);
  });

  it('takes the SQL after a build that rebuilt the model since the catalog', () => {
    for (const which of ['build', 'run', undefined]) {
      const built = declare(runResults(which, MANIFEST_AT, { 'model.shop.orders': 'success' }));
      expect(names(built), String(which)).toEqual(['order_id', 'customer_id']);
      expect(built.warnings).toEqual([expect.stringMatching(/the SQL's columns are declared/)]);
    }
  });

  it('keeps the catalog when the build errored or skipped the model, or ran before the catalog', () => {
    for (const [status, said] of [
      [
        'error',
        'its result in the last dbt command (dbt build, target/run_results.json of 2026-02-01T10:00:00Z) is error',
      ],
      ['skipped', 'is skipped'],
    ]) {
      const failed = declare(runResults('build', MANIFEST_AT, { 'model.shop.orders': status ?? '' }));
      expect(names(failed), status).toEqual(['order_id', 'order_date']);
      expect(failed.warnings[0]).toContain(said);
    }
    const before = declare(runResults('build', '2026-01-29T09:00:00Z', { 'model.shop.orders': 'success' }));
    expect(names(before)).toEqual(['order_id', 'order_date']);
    expect(before.warnings[0]).toMatch(/rebuilt it before catalog\.json was written/);
  });

  it('takes the SQL as before when the last command has no result for the model', () => {
    // dbt test after dbt run, a run of other models, dbt show or parse: an earlier command may have rebuilt it.
    for (const [which, results] of [
      ['test', { 'test.shop.not_null_orders_order_id': 'pass' }],
      ['run', { 'model.shop.customers': 'success' }],
      ['show', {}],
      ['parse', {}],
    ] as const) {
      const declared = declare(runResults(which, MANIFEST_AT, results));
      expect(names(declared), which).toEqual(['order_id', 'customer_id']);
      expect(declared.warnings, which).toEqual([expect.stringMatching(/the SQL's columns are declared/)]);
    }
  });

  it('a catalog time without its zone: a failed or compiled-only result still keeps the catalog; a rebuild cannot be set against it', () => {
    const withUnzoned = (runResultsJson: unknown) =>
      declareDbtProject(
        {
          manifest: project(),
          catalog: catalog('2026-01-30T09:00:00', {
            'model.shop.orders': { order_id: 'BIGINT', order_date: 'DATE' },
          }),
          runResults: runResultsJson,
        },
        {},
        dbtReader,
      );
    const failed = withUnzoned(runResults('build', MANIFEST_AT, { 'model.shop.orders': 'error' }));
    expect(names(failed)).toEqual(['order_id', 'order_date']);
    expect(failed.warnings[0]).toContain('is error');
    // A rebuild from before the catalog's day cannot be told from after it without the catalog's zone.
    const built = withUnzoned(
      runResults('build', '2026-01-29T09:00:00Z', { 'model.shop.orders': 'success' }),
    );
    expect(names(built)).toEqual(['order_id', 'customer_id']);
  });

  it('names an rpc command line by its subcommand, never its arguments', () => {
    const ide = {
      ...runResults(undefined, MANIFEST_AT, { 'model.shop.orders': 'error' }),
      args: { rpc_method: 'cli_args', cli: 'dbt run --vars {"password":"s3cret"} -s orders' },
    };
    // Its subcommand only: the rest of the line may hold secrets.
    const warning = declare(ide).warnings[0] ?? '';
    expect(warning).toContain('the last dbt command (dbt run, target/run_results.json of');
    expect(warning).not.toContain('s3cret');
  });

  it('without run_results.json (or one gds does not read), takes the SQL as before', () => {
    expect(names(declare())).toEqual(['order_id', 'customer_id']);
    expect(names(declare({ results: 'none' }))).toEqual(['order_id', 'customer_id']);
  });
});

describe('an older catalog judged by real run_results.json', needs(noSharedFixtures), () => {
  const real = (file: string) =>
    JSON.parse(readFileSync(`${sharedFixturesDir}real/dbt/${file}`, 'utf8')) as Record<string, unknown>;
  // A catalog from before lists an email the model's SQL does not select.
  const before = (at: string) =>
    catalog(at, {
      'model.jaffle_shop.stg_customers': {
        customer_id: 'INT64',
        first_name: 'STRING',
        last_name: 'STRING',
        email: 'STRING',
      },
    });

  it('dbt 1.7 build (the invocation that wrote the manifest): the SQL columns, unless its result erred', () => {
    // elementary's metadata table selects dbt_pkg_version only; a catalog from before lists another column.
    const id = 'model.elementary.metadata';
    const run = real('dap_v5_1.7.0_build.run_results.json');
    const declared = (runResultsJson: unknown) =>
      declareDbtProject(
        {
          manifest: real('dap_v11_1.7.0.manifest.json'),
          catalog: catalog('2023-11-01T00:00:00Z', {
            [id]: { dbt_pkg_version: 'STRING', pkg_name: 'STRING' },
          }),
          runResults: runResultsJson,
        },
        { select: ['elementary'] },
        dbtReader,
      ).declarations.find((d) => d.uniqueId === id);
    expect(declared(run)?.columns.map((c) => c.name)).toEqual(['dbt_pkg_version']);
    const results = (run['results'] as Array<Record<string, unknown>>).map((r) =>
      r['unique_id'] === id ? { ...r, status: 'error' } : r,
    );
    expect(declared({ ...run, results })?.columns.map((c) => c.name)).toEqual([
      'dbt_pkg_version',
      'pkg_name',
    ]);
  });

  it('dbt 1.12 docs generate: builds nothing, the catalog is kept', () => {
    const generated = declareDbtProject(
      {
        manifest: real('dap_v12_1.12.0.manifest.json'),
        catalog: before('2026-08-01T00:00:00Z'),
        runResults: real('dap_v6_1.12.0_generate.run_results.json'),
      },
      { select: ['stg_customers'] },
      dbtReader,
    );
    const declared = generated.declarations[0]?.columns.map((c) => c.name);
    expect(declared).toContain('email');
    expect(generated.warnings.join('\n')).toMatch(/not rebuilt since the catalog: .*dbt docs generate/);
  });
});

// dbt writes a model's target/run file ("Writing runtime sql for node …") before it runs the SQL, so after a
// failed dbt run then dbt compile that file holds SQL the warehouse refused: dbt's own log tells which.
describe("dbt's file log: whether the run that last wrote a model's target/run file failed", () => {
  const A = 'model.shop.a';
  const B = 'model.shop.b';
  /** A dbt 1.x text log line (colour code, time, level, thread). */
  const line = (level: string, thread: string, msg: string) =>
    `\u001b[0m10:00:00.000001 [${level.padEnd(5)}] [${thread}]: ${msg}`;
  const ran = (id: string, thread: string, result: 'OK' | 'ERROR') => [
    line('debug', thread, `Began running node ${id}`),
    line('debug', thread, `Writing runtime sql for node "${id}"`),
    line('debug', thread, `On ${id}: create view x as (`),
    '  select 1',
    ');',
    result === 'OK'
      ? line(
          'info',
          thread,
          `1 of 2 OK created sql view model main.${id.split('.')[2] ?? ''} ... [OK in 0.1s]`,
        )
      : line(
          'error',
          thread,
          `1 of 2 ERROR creating sql view model main.${id.split('.')[2] ?? ''} ... [ERROR]`,
        ),
    line('debug', thread, `Finished running node ${id}`),
  ];
  /** Each model's target/run file: the DDL `ran` logs. */
  const files = (ids: string[], sql = 'create view x as (\n  select 1\n);') =>
    Object.fromEntries(ids.map((id) => [id, sql]));
  const failures = (lines: string[], ids = [A, B]) => [...loggedRunFailures(lines.join('\n'), files(ids))];

  it('a model whose last run erred, in dbt 1.x text; threads interleaved; a later compile changes nothing', () => {
    expect(failures(ran(A, 'Thread-1 (', 'ERROR'))).toEqual([A]);
    expect(failures(ran(A, 'Thread-1 (', 'OK'))).toEqual([]);
    // Threads interleave events, never the lines of one (dbt writes a message and the SQL it spans at once).
    const events = (lines: string[]) =>
      lines.reduce<string[]>(
        (all, l) =>
          l.startsWith('\u001b') ? [...all, l] : [...all.slice(0, -1), `${all.at(-1) ?? ''}\n${l}`],
        [],
      );
    const a = events(ran(A, 'Thread-1 (', 'ERROR'));
    const b = events(ran(B, 'Thread-2 (', 'OK'));
    expect(failures(a.flatMap((l, i) => [l, b[i] ?? '']))).toEqual([A]);
    // A later run that succeeded decides; dbt compile writes no runtime SQL, so it does not.
    expect(failures([...ran(A, 'Thread-1 (', 'ERROR'), ...ran(A, 'Thread-3 (', 'OK')])).toEqual([]);
    const compiled = [
      line('debug', 'Thread-1 (', `Began running node ${A}`),
      line('debug', 'Thread-1 (', `Finished running node ${A}`),
    ];
    expect(failures([...ran(A, 'Thread-1 (', 'ERROR'), ...compiled])).toEqual([A]);
  });

  it("dbt 0.x text (no level: its ERROR creating line), --log-format-file json and dbt 1.0 to 1.3's flat JSON", () => {
    const formats: Record<string, (level: string, msg: string) => string> = {
      old: (_level, msg) => `2021-03-01 10:00:00.000001 (Thread-1): ${msg}`,
      json: (level, msg) =>
        JSON.stringify({ info: { level, msg, name: 'X', thread: 'Thread-1 (worker)' }, data: {} }),
      // dbt 1.0 to 1.3's --log-format json (file and console alike): the fields flat, the thread as thread_name.
      flat: (level, msg) =>
        JSON.stringify({ code: 'X', level, log_version: 2, msg, thread_name: 'Thread-1', type: 'log_line' }),
    };
    for (const [format, at] of Object.entries(formats)) {
      const result =
        format === 'old'
          ? '10:00:00 | 1 of 1 ERROR creating view model main.a.... [ERROR in 0.10s]'
          : '1 of 1 ERROR creating sql view model main.a ... [ERROR in 0.1s]';
      const log = [
        at('debug', `Writing runtime ${format === 'old' ? 'SQL' : 'sql'} for node "${A}"`),
        at('error', result),
        at('debug', `Finished running node ${A}`),
      ];
      expect(failures(log), format).toEqual([A]);
    }
  });

  it('tells nothing of a model it has no runtime SQL of, or whose run did not finish', () => {
    expect(failures(ran(A, 'Thread-1 (', 'ERROR'), [B])).toEqual([]);
    expect(failures(ran(A, 'Thread-1 (', 'ERROR').slice(0, -1))).toEqual([]);
    expect(failures(['not a log', '{"also": "not"}'])).toEqual([]);
  });

  it('a failed run does not hide the last one that rebuilt the model from the same SQL; one of other SQL does', () => {
    expect(failures([...ran(A, 'Thread-1 (', 'OK'), ...ran(A, 'Thread-1 (', 'ERROR')])).toEqual([]);
    const other = ran(A, 'Thread-1 (', 'OK').map((l) => l.replace('select 1', 'select 2'));
    expect(failures([...other, ...ran(A, 'Thread-1 (', 'ERROR')])).toEqual([A]);
    // The last rebuild decides: the same SQL, then other SQL, then the failure.
    expect(failures([...ran(A, 'Thread-1 (', 'OK'), ...other, ...ran(A, 'Thread-1 (', 'ERROR')])).toEqual([
      A,
    ]);
  });

  it("a failed run that ran other SQL than the model's target/run file is not that file's run: it tells nothing", () => {
    // The file holds select 2, built by a run logged elsewhere since (--log-path), or the log is another
    // project's of the same name: the log's last run of the model ran select 1 and failed.
    expect(failures(ran(A, 'Thread-1 (', 'ERROR'), [A])).toEqual([A]);
    const sql2 = { [A]: 'create view x as (\n  select 2\n);' };
    expect([...loggedRunFailures(ran(A, 'Thread-1 (', 'ERROR').join('\n'), sql2)]).toEqual([]);
    // A run that failed before it ran the file's SQL (its BEGIN logged, then the connection lost) still fails.
    const begun = [
      line('debug', 'Thread-1 (', `Writing runtime sql for node "${A}"`),
      line('debug', 'Thread-1 (', `On ${A}: BEGIN`),
      line('error', 'Thread-1 (', '1 of 1 ERROR creating sql view model main.a ... [ERROR in 0.1s]'),
      line('debug', 'Thread-1 (', `Finished running node ${A}`),
    ];
    expect([...loggedRunFailures(begun.join('\n'), sql2)]).toEqual([A]);
  });

  /**
   * What dbt-adapters' commit() logs of the model's connection: its SQLCommit event, then the COMMIT it runs
   * (`Using …`, `On <id>: COMMIT`) and, once the warehouse answered, that statement's status.
   */
  const commitLines = (conn: string, done = true) => [
    `On ${conn}: COMMIT`,
    `Using postgres connection "${conn}"`,
    `On ${conn}: COMMIT`,
    ...(done ? ['SQL status: COMMIT in 0.002 seconds'] : []),
  ];

  it("an error after the model's COMMIT (a post-hook, the backup's drop) is a rebuild; another connection's is not", () => {
    const failing = (events: string[]) => {
      const run = ran(A, 'Thread-1 (', 'ERROR');
      return [...run.slice(0, 5), ...events.map((e) => line('debug', 'Thread-1 (', e)), ...run.slice(5)];
    };
    expect(failures(failing(commitLines(A)))).toEqual([]);
    expect(failures(failing(commitLines('master')))).toEqual([A]);
    expect(failures(failing([`On ${A}: ROLLBACK`]))).toEqual([A]);
    const json = (level: string, msg: string) =>
      JSON.stringify({ info: { level, msg, name: 'X', thread: 'Thread-1 (worker)' }, data: {} });
    const logged = (commit: string[]) => [
      json('debug', `Writing runtime sql for node "${A}"`),
      json('debug', `On ${A}: create view x as (\n  select 1\n);`),
      ...commit.map((e) => json('debug', e)),
      json('error', '1 of 1 ERROR creating sql view model main.a ... [ERROR in 0.1s]'),
      json('debug', `Finished running node ${A}`),
    ];
    expect(failures(logged(commitLines(A)))).toEqual([]);
    expect(failures(logged([]))).toEqual([A]);
  });

  it('a COMMIT that itself failed (no status logged for it before the error) is no rebuild: the DDL did not land', () => {
    // PostgreSQL refusing the COMMIT (a serialization failure, a deferred constraint): dbt logs the COMMIT it
    // ran, the adapter's error and the ROLLBACK, then the model's ERROR line; no `SQL status:` for the COMMIT.
    const refused = [
      ...commitLines(A, false),
      'Postgres adapter: Postgres error: could not serialize access due to concurrent update',
      `On ${A}: ROLLBACK`,
      `On ${A}: Close`,
    ];
    const run = ran(A, 'Thread-1 (', 'ERROR');
    const log = [...run.slice(0, 5), ...refused.map((e) => line('debug', 'Thread-1 (', e)), ...run.slice(5)];
    expect(failures(log)).toEqual([A]);
    // dbt 0.x's text log, no level: its ERROR creating line after the refused COMMIT.
    const old = (msg: string) => `2021-03-01 10:00:00.000001 (Thread-1): ${msg}`;
    const logged0x = [
      old(`Writing runtime SQL for node "${A}"`),
      old(`On ${A}: create view x as (`),
      '  select 1',
      ');',
      old('SQL status: CREATE VIEW in 0.01 seconds'),
      ...refused.map(old),
      old('10:00:00 | 1 of 1 ERROR creating view model main.a.... [ERROR in 0.10s]'),
      old(`Finished running node ${A}`),
    ];
    expect(failures(logged0x)).toEqual([A]);
    // The same COMMIT answered (its status logged), then a failure after it: the relation was replaced.
    const answered = logged0x.map((l) =>
      l.includes('Postgres error') ? old('SQL status: COMMIT in 0.00 seconds') : l,
    );
    expect(failures(answered)).toEqual([]);
  });

  it('on a warehouse whose DDL commits itself, an error after the DDL was done is a rebuild, without a COMMIT', () => {
    const ddl = 'create or replace transient table x as (\n  select 1\n);';
    const run = (after: string[]) => [
      line('debug', 'Thread-1 (', `Writing runtime sql for node "${A}"`),
      line('debug', 'Thread-1 (', `On ${A}: /* {"app": "dbt"} */ create or replace transient table x as (`),
      '  select 1',
      ');',
      ...after,
      line('error', 'Thread-1 (', '1 of 1 ERROR creating sql table model main.a ... [ERROR in 0.1s]'),
      line('debug', 'Thread-1 (', `Finished running node ${A}`),
    ];
    const judged = (lines: string[], adapter?: string) => [
      ...loggedRunFailures(lines.join('\n'), { [A]: ddl }, adapter),
    ];
    // Snowflake: the DDL's status logged, then a post-hook that fails before dbt's COMMIT.
    const postHook = [
      line('debug', 'Thread-1 (', 'SQL status: SUCCESS 1 in 0.52 seconds'),
      line('debug', 'Thread-1 (', `On ${A}: grant select on x to role reporter`),
    ];
    expect(judged(run(postHook), 'snowflake')).toEqual([]);
    // BigQuery logs no status: the model's next statement says the DDL was done.
    expect(judged(run(postHook.slice(1)), 'bigquery')).toEqual([]);
    // The DDL itself refused (nothing logged after it): no rebuild, on any warehouse.
    expect(judged(run([]), 'snowflake')).toEqual([A]);
    expect(judged(run([]), 'bigquery')).toEqual([A]);
    // Nor when dbt then releases the model's connection (dbt-adapters' close: ROLLBACK where a transaction is
    // open, then Close) before it logs the result: those are no statement of the model.
    const released = (events: string[]) =>
      run([
        line(
          'debug',
          'Thread-1 (',
          'Snowflake adapter: Snowflake error: 002003 (42S02): SQL compilation error',
        ),
        ...events.map((event) => line('debug', 'Thread-1 (', `On ${A}: ${event}`)),
      ]);
    for (const adapter of ['snowflake', 'spark', 'databricks'])
      for (const events of [['Close'], ['ROLLBACK', 'Close'], ['No close available on handle']])
        expect(judged(released(events), adapter)).toEqual([A]);
    // PostgreSQL rolls the DDL back with the failed transaction: only a COMMIT says it was replaced.
    expect(judged(run(postHook), 'postgres')).toEqual([A]);
    expect(judged(run(postHook))).toEqual([A]);
    // A statement that is not the model's DDL (an incremental's merge) commits nothing of its relation.
    const merge = 'merge into x using y on x.id = y.id when matched then update set v = y.v;';
    const merged = [
      line('debug', 'Thread-1 (', `Writing runtime sql for node "${A}"`),
      line('debug', 'Thread-1 (', `On ${A}: ${merge}`),
      ...postHook,
      line('error', 'Thread-1 (', '1 of 1 ERROR creating sql incremental model main.a ... [ERROR in 0.1s]'),
      line('debug', 'Thread-1 (', `Finished running node ${A}`),
    ];
    expect([...loggedRunFailures(merged.join('\n'), { [A]: merge }, 'snowflake')]).toEqual([A]);
    // Nor does one of a relation dbt renames into place next (…__dbt_tmp): the rename may have failed.
    const staged = ddl.replace('table x as', 'table x__dbt_tmp as');
    const renamed = run(postHook).map((l) => l.replace('table x as', 'table x__dbt_tmp as'));
    expect([...loggedRunFailures(renamed.join('\n'), { [A]: staged }, 'databricks')]).toEqual([A]);
  });

  it("dbt's query comment appended (query-comment: append: true) before the file's last `;` still reads as the file's SQL", () => {
    // dbt-adapters' _QueryComment.add with append: the SQL, its last `;` taken off, then `/* … */;`.
    const appended = (l: string) => l.replace(/^\);$/, ')\n/* {"app": "dbt", "node_id": "model.shop.a"} */;');
    // A failed re-run does not hide the earlier rebuild of the same SQL.
    expect(failures([...ran(A, 'Thread-1 (', 'OK'), ...ran(A, 'Thread-1 (', 'ERROR')].map(appended))).toEqual(
      [],
    );
    // On Snowflake, a post-hook failing after the DDL was done: a rebuild.
    const ddl = 'create or replace transient table x as (\n  select 1\n);';
    const log = [
      line('debug', 'Thread-1 (', `Writing runtime sql for node "${A}"`),
      line('debug', 'Thread-1 (', `On ${A}: create or replace transient table x as (`),
      '  select 1',
      ')',
      '/* {"app": "dbt", "node_id": "model.shop.a"} */;',
      line('debug', 'Thread-1 (', 'SQL status: SUCCESS 1 in 0.52 seconds'),
      line('debug', 'Thread-1 (', `On ${A}: grant select on x to role reporter`),
      line('error', 'Thread-1 (', '1 of 1 ERROR creating sql table model main.a ... [ERROR in 0.1s]'),
      line('debug', 'Thread-1 (', `Finished running node ${A}`),
    ];
    expect([...loggedRunFailures(log.join('\n'), { [A]: ddl }, 'snowflake')]).toEqual([]);
  });

  describe("Snowflake's multi-statement SQL, each statement logged on its own", () => {
    // dbt-snowflake splits the SQL it runs at each `;` (the connector's split_statements) and logs each
    // statement with dbt's query comment; the file's `begin;` and `commit;` it runs as dbt's own BEGIN and
    // COMMIT (dbt 1.7.16's log of an incremental model, as a dbt Labs engineer published it).
    const comment = '/* {"app": "dbt", "dbt_version": "1.7.16", "node_id": "model.shop.a"} */';
    const deleteInsert = [
      '-- back compat for old kwarg name',
      '  ',
      '  begin;',
      '    delete from analytics.a',
      '    where (id) in (select (id) from analytics.a__dbt_tmp);',
      '',
      '    insert into analytics.a ("ID", "STATUS")',
      '    (',
      '        select "ID", "STATUS"',
      '        from analytics.a__dbt_tmp',
      '    )',
      '    ;',
      '    commit;',
    ].join('\n');
    /** The statements dbt-snowflake 1.7 logs for that file: each after the query comment. */
    const statements = [
      ['-- back compat for old kwarg name', '  ', '  begin;'],
      ['delete from analytics.a', '    where (id) in (select (id) from analytics.a__dbt_tmp);'],
      [
        'insert into analytics.a ("ID", "STATUS")',
        '    (',
        '        select "ID", "STATUS"',
        '        from analytics.a__dbt_tmp',
        '    )',
        '    ;',
      ],
      ['COMMIT'],
    ];
    const t = 'Thread-1 (';
    /** A run of the file that failed at statement `failedAt` (none: it succeeded). */
    const logOf = (failedAt?: number) => [
      line('debug', t, `Writing runtime sql for node "${A}"`),
      ...statements
        .slice(0, (failedAt ?? statements.length - 1) + 1)
        .flatMap((lines, i) => [
          line('debug', t, `Using snowflake connection "${A}"`),
          line('debug', t, `On ${A}: ${comment}`),
          ...lines,
          ...(i === failedAt
            ? [
                line(
                  'debug',
                  t,
                  'Snowflake adapter: Snowflake error: 100038 (22018): Numeric value is not recognized',
                ),
              ]
            : [line('debug', t, 'SQL status: SUCCESS 1 in 0.5 seconds')]),
        ]),
      failedAt === undefined
        ? line('info', t, '1 of 1 OK created sql incremental model analytics.a ... [SUCCESS 1 in 2.1s]')
        : line('error', t, '1 of 1 ERROR creating sql incremental model analytics.a ... [ERROR in 2.1s]'),
      line('debug', t, `Finished running node ${A}`),
    ];
    const judged = (lines: string[], sql = deleteInsert) => [
      ...loggedRunFailures(lines.join('\n'), { [A]: sql }, 'snowflake'),
    ];

    it("delete+insert: a run that failed at its delete, its insert or its COMMIT is the file's, and failed", () => {
      expect(judged(logOf())).toEqual([]);
      for (const at of [1, 2, 3]) expect(judged(logOf(at)), `failed at ${at}`).toEqual([A]);
      // An earlier run of the same SQL that succeeded is the relation's last build.
      expect(judged([...logOf(), ...logOf(2)])).toEqual([]);
      // A run that logged other SQL tells nothing of this file.
      const other = logOf(2).map((l) => l.replace('"STATUS"', '"STATE"'));
      expect(judged(other)).toEqual([]);
    });

    it("a table model's sql_header before its DDL: the DDL refused is a failure; done, then a post-hook failing, is a rebuild", () => {
      const file =
        "alter session set timezone = 'UTC';\ncreate or replace transient table analytics.a as (\n  select 1 as id\n);";
      const run = (after: string[]) => [
        line('debug', t, `Writing runtime sql for node "${A}"`),
        line('debug', t, `On ${A}: ${comment}`),
        "alter session set timezone = 'UTC';",
        line('debug', t, 'SQL status: SUCCESS 1 in 0.1 seconds'),
        line('debug', t, `On ${A}: ${comment}`),
        'create or replace transient table analytics.a as (',
        '  select 1 as id',
        ');',
        ...after,
        line('error', t, '1 of 1 ERROR creating sql table model analytics.a ... [ERROR in 0.1s]'),
        line('debug', t, `Finished running node ${A}`),
      ];
      expect(judged(run([]), file)).toEqual([A]);
      const postHook = [
        line('debug', t, 'SQL status: SUCCESS 1 in 0.52 seconds'),
        line('debug', t, `On ${A}: ${comment}`),
        'grant select on analytics.a to role reporter',
      ];
      expect(judged(run(postHook), file)).toEqual([]);
    });
  });

  it('a merge after many comments is read at once as no DDL (no split of its comments tried one by one)', () => {
    // The target/run file of an incremental model on Snowflake: a sql_header of comments, then its merge.
    const merge = `${'/* note */\n'.repeat(40)}merge into x using y on x.id = y.id when matched then delete;`;
    const log = [
      line('debug', 'Thread-1 (', `Writing runtime sql for node "${A}"`),
      line('debug', 'Thread-1 (', `On ${A}: ${merge.replaceAll('\n', ' ')}`),
      line('debug', 'Thread-1 (', 'SQL status: SUCCESS 1 in 0.52 seconds'),
      line('debug', 'Thread-1 (', `On ${A}: grant select on x to role reporter`),
      line('error', 'Thread-1 (', '1 of 1 ERROR creating sql incremental model main.a ... [ERROR in 0.1s]'),
      line('debug', 'Thread-1 (', `Finished running node ${A}`),
    ];
    expect([...loggedRunFailures(log.join('\n'), { [A]: merge }, 'snowflake')]).toEqual([A]);
    // The same comments (one ending `**/`, a line comment) before the DDL of the relation: still its DDL.
    const ddl = `/* a **/\n-- b\n${'/* note */\n'.repeat(40)}create or replace view x as (select 1);`;
    const built = log.map((l) => l.replace(merge.replaceAll('\n', ' '), ddl.replaceAll('\n', ' ')));
    expect([...loggedRunFailures(built.join('\n'), { [A]: ddl }, 'snowflake')]).toEqual([]);
  });

  it('a run killed before it finished tells nothing, whatever its thread logs in later invocations', () => {
    // dbt run -s a killed mid-DDL (no Finished line); a later run of b fails on the same thread name; then
    // dbt compile -s a begins and finishes a on it: none of that is a's killed run.
    const killed = ran(A, 'Thread-1 (', 'OK').slice(0, 3);
    const compiled = [
      line('debug', 'Thread-1 (', `Began running node ${A}`),
      line('debug', 'Thread-1 (', `Finished running node ${A}`),
    ];
    expect(failures([...killed, ...ran(B, 'Thread-1 (', 'ERROR'), ...compiled], [A])).toEqual([]);
  });
});
