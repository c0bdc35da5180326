// Row counts past 2,147,483,647 (PostgreSQL's integer) are read exactly, on both engines: Gate 1's record
// count, its duplicate keys and the rows they span, its null counts; the suggested rules' profile; Gate 2's
// stored value types and Gate 3's row count (detached jobs); a records listing's total. No
// test can insert 2^31 rows, so the gate's transactions here resolve `count(*)` to an aggregate that starts
// at 3,000,000,000 (schema `huge`, put before pg_catalog on the search path): every count the gate takes is
// then 3,000,000,000 more than the rows it counts, as on a table that large. Before, each was cast to
// integer and the check failed with "integer out of range" instead of giving its result.
import { describe, expect, it } from 'vitest';
import type { Db } from '../../../src/server/db/handle.js';
import { migrate } from '../../../src/server/db/migrations.js';
import { registerGateJobHandlers } from '../../../src/server/gates/detached.js';
import { runGate1 } from '../../../src/server/gates/gate1-runner.js';
import { storeGate1Version } from '../../../src/server/gates/gate1-store.js';
import { suggestGate1 } from '../../../src/server/gates/suggest.js';
import type { GateTable } from '../../../src/server/gates/table.js';
import { loadGateTable } from '../../../src/server/gates/table.js';
import { runBaselineJob } from '../../../src/server/governance/baseline.js';
import { BASELINE_JOB } from '../../../src/server/governance/definitions.js';
import type { JobType } from '../../../src/server/governance/jobs.js';
import { enqueueJob, getJob, JobRunner, registerJobHandler } from '../../../src/server/governance/jobs.js';
import { listRecords } from '../../../src/server/records/store.js';
import { loadActiveTable } from '../../../src/server/records/tables.js';
import { seedIfEmpty } from '../../../src/server/seed.js';
import { ENGINES, useEngineDb } from '../../helpers/engines.js';
import { needs } from '../../helpers/skip.js';

const HUGE = 3_000_000_000;

const HUGE_COUNT = `
  CREATE SCHEMA huge;
  CREATE FUNCTION huge.count_step(bigint) RETURNS bigint LANGUAGE sql IMMUTABLE STRICT AS 'SELECT $1 + 1';
  CREATE AGGREGATE huge.count(*) (SFUNC = huge.count_step, STYPE = bigint, INITCOND = '${HUGE}');`;

/**
 * `db` with every transaction's `count(*)` the huge one. The gates run in place (no sandbox, whose fresh
 * cluster has no schema huge), in the transaction `readOnly` opens.
 */
function hugeCounts(db: Db): Db {
  return {
    kind: db.kind,
    queryTimeoutMs: db.queryTimeoutMs,
    query: (sql, params) => db.query(sql, params),
    exec: (sql) => db.exec(sql),
    transaction: (fn) =>
      db.transaction(async (tx) => {
        await tx.exec('SET LOCAL search_path TO huge, pg_catalog, public');
        return fn(tx);
      }),
    close: () => db.close(),
  };
}

describe.each(ENGINES)('counts past 2^31 on $engine', (engine) => {
  let customers: GateTable;
  let contacts: GateTable;
  const db = useEngineDb(engine, async (opened) => {
    await migrate(opened);
    await seedIfEmpty(opened, Date.now);
    await opened.exec(HUGE_COUNT);
    const [row] = await opened.query<{ id: string; workspace_id: string }>(
      `SELECT id, workspace_id FROM gds.tables WHERE name = 'customers' AND active ORDER BY created_at LIMIT 1`,
    );
    if (!row) throw new Error('no seeded customers table');
    await opened.query(`UPDATE gds.tables SET grain_key_columns = '["customer_id"]' WHERE id = $1`, [row.id]);
    await storeGate1Version(opened, {
      tableId: row.id,
      content: 'uniqueChecks:\n  - name: one_row_per_country\n    columns: [country]\n    severity: WARN\n',
      createdBy: 'test',
      createdAt: new Date().toISOString(),
    });
    customers = await loadGateTable(opened, row.workspace_id, row.id);
    const [modeB] = await opened.query<{ id: string }>(
      `SELECT id FROM gds.tables WHERE name = 'crm_contacts' AND workspace_id = $1 AND active`,
      [row.workspace_id],
    );
    if (!modeB) throw new Error('no seeded crm_contacts table');
    contacts = await loadGateTable(opened, row.workspace_id, modeB.id);
    registerGateJobHandlers();
    registerJobHandler(BASELINE_JOB, runBaselineJob);
  });

  /** Runs a job of `type` on `table` to its end with `on` as the worker's database; returns it. */
  const runJob = async (on: Db, type: JobType, table: GateTable, params: Record<string, unknown> = {}) => {
    const job = await enqueueJob(db(), {
      workspaceId: table.workspaceId,
      tableId: table.id,
      type,
      createdBy: table.ownerId,
      clock: Date.now,
      params,
    });
    const runner = new JobRunner({ db: on, clock: Date.now }, 'manual');
    await runner.runPending();
    await runner.stop();
    const done = await getJob(db(), table.workspaceId, job.id);
    expect(done).toMatchObject({ status: 'SUCCEEDED', error: null });
    return done?.result as { checks: Array<{ name: string; detail: string }> };
  };

  it('Gate 1 counts, and sums the rows of duplicate keys, past 2^31', needs(engine.skip), async () => {
    const proof = await runGate1(hugeCounts(db()), customers, { clock: Date.now });
    const result = (name: string) => proof.results.find((r) => r.name === name);
    expect(proof.results.filter((r) => /out of range/.test(r.detail))).toEqual([]);
    // The seeded customers: 10 rows, 9 customer_id values (1004 twice), 3 country values and 2 nulls.
    expect(proof.rowsChecked).toBe(HUGE + 10);
    expect(result('record_count')).toMatchObject({
      passed: true,
      detail: expect.stringContaining(`${HUGE + 10} rows`),
    });
    // Each key counts HUGE more than its rows, so each is "duplicated": 9 keys over 9 * HUGE + 10 rows.
    expect(result('grain_uniqueness')).toMatchObject({ passed: false, failingRows: 9 * HUGE + 10 });
    expect(result('grain_uniqueness')?.detail).toContain(`${HUGE + 9} grain key values`);
    // The uniqueCheck skips null countries: 3 values (GB, NL, US), over the 8 rows that have one.
    expect(result('one_row_per_country')).toMatchObject({ passed: false, failingRows: 3 * HUGE + 8 });
    expect(result('null_rate.email')).toMatchObject({ failingRows: HUGE + 1 });
    expect(result('null_rate.email')?.detail).toContain(`in ${HUGE + 10} rows`);
  });

  it('the suggested rules profile columns past 2^31', needs(engine.skip), async () => {
    const suggested = await suggestGate1(hugeCounts(db()), customers);
    // count(DISTINCT …) takes an argument: PostgreSQL's own, so the 9 customer_id values are 9.
    expect(suggested.profile.find((p) => p.name === 'customer_id')).toMatchObject({
      rows: HUGE + 10,
      nulls: HUGE,
      distinct: 9,
    });
  });

  it('Gate 3 counts the rows it compares with the baseline past 2^31', needs(engine.skip), async () => {
    const baseline = await runJob(db(), BASELINE_JOB, customers, { source: customers.source });
    const report = await runJob(hugeCounts(db()), 'gate3', customers, {
      baselineReportId: (baseline as unknown as { reportId: string }).reportId,
    });
    expect(report.checks.find((c) => c.name === 'row_count_drift')?.detail).toContain(
      `${HUGE + 10} rows now, 10 in the baseline`,
    );
  });

  it('Gate 2 counts stored values of the wrong type past 2^31', needs(engine.skip), async () => {
    const report = await runJob(hugeCounts(db()), 'gate2', contacts);
    expect(report.checks.find((c) => c.name === 'stored_value_types')?.detail).toContain(
      `email (${HUGE} rows)`,
    );
  });

  it('a records listing totals its rows past 2^31', needs(engine.skip), async () => {
    const table = await loadActiveTable(db(), customers.workspaceId, customers.id);
    const listed = await hugeCounts(db()).transaction((tx) => listRecords(tx, table, { page: 1, limit: 2 }));
    expect(listed.total).toBe(HUGE + 10);
  });
});
