// Gate 2 (semantic/structural) and Gate 3 (statistical) as detached, evidence-only jobs: each
// handler reads the table's rows in a read-only transaction and returns a report stored as the
// job's result. They change no state and certify nothing.
import type { Queryable } from '../db/handle.js';
import type { BaselineReport } from '../governance/baseline.js';
import type { Job, JobEnv } from '../governance/jobs.js';
import { registerJobHandler } from '../governance/jobs.js';
import type { ColumnType } from '../records/columns.js';
import { COLUMN_TYPE_OF, quoteIdent } from '../warehouse.js';
import { percent, plural } from './format.js';
import type { Relation } from './relation.js';
import { Params } from './relation.js';
import { gateRead, noState } from './snapshot.js';
import type { GateTable, TableVersions } from './table.js';
import { loadGateTable } from './table.js';

export interface EvidenceCheck {
  name: string;
  passed: boolean;
  /** WARN checks are recorded without failing the report. */
  severity: 'FAIL' | 'WARN';
  detail: string;
}

export interface EvidenceReport {
  gate: 2 | 3;
  tableId: string;
  passed: boolean;
  evidenceOnly: true;
  checks: EvidenceCheck[];
  tableVersion: TableVersions;
  baselineReportId?: string;
  finishedAt: string;
}

/** Gate 3 drift limits: relative row-count change, and absolute null-rate change per column. */
export const DRIFT_LIMITS = { rowCount: 0.2, nullRate: 0.1 } as const;

export function registerGateJobHandlers(): void {
  registerJobHandler('gate2', (job, env) =>
    withTable(job, env, noState, (tx, table, relation) => gate2(tx, table, relation)),
  );
  registerJobHandler('gate3', (job, env) =>
    withTable(
      job,
      env,
      async (tx) => {
        const baselineId = job.params['baselineReportId'];
        const [baseline] = await tx.query<{ result: BaselineReport | null }>(
          `SELECT result FROM gds.jobs WHERE id = $1 AND workspace_id = $2 AND type = 'gate-baseline-auto'`,
          [baselineId, job.workspaceId],
        );
        if (!baseline?.result) throw new Error(`the baseline report ${String(baselineId)} has no result`);
        return baseline.result;
      },
      (tx, _table, relation, baseline) => gate3(tx, relation, baseline),
    ).then((report) => ({ ...report, baselineReportId: String(job.params['baselineReportId']) })),
  );
}

async function withTable<S>(
  job: Job,
  env: JobEnv,
  state: (tx: Queryable) => Promise<S>,
  run: (tx: Queryable, table: GateTable, relation: Relation, state: S) => Promise<EvidenceCheck[]>,
): Promise<EvidenceReport> {
  const db = env.db;
  if (!job.tableId) throw new Error('the job names no table');
  const table = await loadGateTable(db, job.workspaceId, job.tableId);
  const checks = await gateRead(db, table, {
    state,
    run: (tx, relation, read) => run(tx, table, relation, read),
    background: true,
  });
  return {
    gate: job.type === 'gate3' ? 3 : 2,
    tableId: table.id,
    passed: checks.every((c) => c.passed || c.severity === 'WARN'),
    evidenceOnly: true,
    checks,
    tableVersion: table.versions,
    finishedAt: new Date(env.clock()).toISOString(),
  };
}

const JSON_TYPE: Record<ColumnType, string[]> = {
  text: ['string'],
  integer: ['number'],
  numeric: ['number'],
  boolean: ['boolean'],
  date: ['string'],
  timestamp: ['string'],
};

async function gate2(tx: Queryable, table: GateTable, relation: Relation): Promise<EvidenceCheck[]> {
  const checks: EvidenceCheck[] = [];
  checks.push({
    name: 'columns_present',
    passed: relation.exists && relation.missing.length === 0,
    severity: 'FAIL',
    detail: !relation.exists
      ? `${relation.label} does not exist.`
      : relation.missing.length === 0
        ? `Every registered column exists in ${relation.label}.`
        : `Missing from ${relation.label}: ${relation.missing.join(', ')}.`,
  });
  const live = new Map(relation.warehouseColumns.map((c) => [c.name, c.dataType.replace(/\(.*\)$/, '')]));
  const mismatched = table.columns
    .filter((c) => live.has(c.name) && COLUMN_TYPE_OF[live.get(c.name) ?? ''] !== c.type)
    .map((c) => `${c.name} (registered ${c.type}, warehouse ${live.get(c.name) ?? '?'})`);
  checks.push({
    name: 'column_types',
    passed: mismatched.length === 0,
    severity: 'FAIL',
    detail:
      mismatched.length === 0
        ? 'Every registered type matches the warehouse type.'
        : `Type mismatches: ${mismatched.join(', ')}.`,
  });
  const registered = new Set(table.columns.map((c) => c.name));
  const unregistered = relation.warehouseColumns.filter((c) => !registered.has(c.name)).map((c) => c.name);
  checks.push({
    name: 'unregistered_columns',
    passed: unregistered.length === 0,
    severity: 'WARN',
    detail:
      unregistered.length === 0
        ? 'The warehouse object has no column the definition leaves out.'
        : `Columns not in the definition: ${unregistered.join(', ')}.`,
  });
  const undeclaredKeys = table.grainKeyColumns.filter((k) => !registered.has(k));
  checks.push({
    name: 'grain_keys_registered',
    passed: undeclaredKeys.length === 0,
    severity: 'FAIL',
    detail:
      table.grainKeyColumns.length === 0
        ? 'No grain key columns are declared.'
        : undeclaredKeys.length === 0
          ? `Grain keys (${table.grainKeyColumns.join(', ')}) are registered columns.`
          : `Grain keys that are not registered columns: ${undeclaredKeys.join(', ')}.`,
  });
  if (table.mode === 'MODE_B') checks.push(await storedValueTypes(tx, table));
  return checks;
}

/** Mode B: every stored value has the JSON type its column's type needs. */
async function storedValueTypes(tx: Queryable, table: GateTable): Promise<EvidenceCheck> {
  const params = new Params();
  const tests = table.columns.map(
    (c) =>
      `count(*) FILTER (WHERE jsonb_typeof(data -> ${params.add(c.name)}) NOT IN ('null', ${JSON_TYPE[c.type]
        .map((t) => params.add(t))
        .join(', ')}))::float8 AS ${quoteIdent(c.name)}`,
  );
  const [row] = await tx.query<Record<string, number>>(
    `SELECT ${tests.join(', ') || '0 AS none'} FROM gds.records WHERE table_id = ${params.add(table.id)}`,
    params.values,
  );
  const bad = Object.entries(row ?? {}).filter(([, n]) => n > 0);
  return {
    name: 'stored_value_types',
    passed: bad.length === 0,
    severity: 'FAIL',
    detail:
      bad.length === 0
        ? 'Every stored value has its column type.'
        : `Values of the wrong type: ${bad.map(([c, n]) => `${c} (${plural(n, 'row')})`).join(', ')}.`,
  };
}

async function gate3(tx: Queryable, relation: Relation, baseline: BaselineReport): Promise<EvidenceCheck[]> {
  const base = new Map(baseline.columns.map((c) => [c.name, c]));
  const columns = relation.present.filter((c) => base.has(c));
  const params = new Params();
  const cte = relation.rowsCte(params);
  const [row] = await tx.query<Record<string, number>>(
    `${cte} SELECT count(*)::float8 AS __rows${columns
      .map((c, i) => `, count(*) FILTER (WHERE ${quoteIdent(c)} IS NULL)::float8 AS n${i}`)
      .join('')} FROM gate_rows`,
    params.values,
  );
  const rows = row?.__rows ?? 0;
  const rowDrift = Math.abs(rows - baseline.rowCount) / Math.max(baseline.rowCount, 1);
  const checks: EvidenceCheck[] = [
    {
      name: 'row_count_drift',
      passed: rowDrift <= DRIFT_LIMITS.rowCount,
      severity: 'FAIL',
      detail: `${plural(rows, 'row')} now, ${baseline.rowCount} in the baseline (${percent(rowDrift)} change; limit ${percent(DRIFT_LIMITS.rowCount)}).`,
    },
  ];
  for (const [i, name] of columns.entries()) {
    const before = base.get(name);
    const nowRate = rows === 0 ? 0 : (row?.[`n${i}`] ?? 0) / rows;
    const thenRate = baseline.rowCount === 0 ? 0 : (before?.nullCount ?? 0) / baseline.rowCount;
    const drift = Math.abs(nowRate - thenRate);
    checks.push({
      name: `null_rate_drift.${name}`,
      passed: drift <= DRIFT_LIMITS.nullRate,
      severity: 'FAIL',
      detail: `Null rate ${percent(nowRate)} now, ${percent(thenRate)} in the baseline (limit ±${percent(DRIFT_LIMITS.nullRate)}).`,
    });
  }
  return checks;
}
