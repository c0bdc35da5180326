// The auto-baseline job (`gate-baseline-auto`): profiles the warehouse object a definition points at
// and stores the profile as the job's result, the baseline report Gate 3 compares against (the job id is
// the report id).
import { assertWithinEmbedded } from '../db/embedded-limit.js';
import type { Queryable } from '../db/handle.js';
import { describeWarehouseObject, quoteIdent, quoteSource } from '../warehouse.js';
import type { Job, JobEnv } from './jobs.js';

export interface BaselineReport {
  reportId: string;
  tableId: string | null;
  source: string;
  profiledAt: string;
  rowCount: number;
  columns: Array<{ name: string; type: string; nullCount: number; distinctCount: number }>;
  /** Registered columns the warehouse object does not have. */
  missingColumns: string[];
}

/**
 * Columns profiled per statement. Each takes two entries of the select list (its null and distinct
 * counts) and PostgreSQL allows 1,664, so one statement held at most 832 columns; and the cost of a
 * statement grows faster than its count of DISTINCT aggregates (PGlite, 2 rows: 100 of them 0.12 s,
 * 400 2.8 s, 800 20 s; PostgreSQL at 10,000 rows: 800 in one statement 4.5 s, in eight 4.9 s). So
 * 100 columns a statement: a view of 1,600 columns (PostgreSQL's limit) is 16 short statements.
 */
export const BASELINE_COLUMNS_PER_STATEMENT = 100;

/**
 * Row count, then null and distinct counts per column: one scan of `source` per batch of
 * BASELINE_COLUMNS_PER_STATEMENT columns. On PostgreSQL the job reads the batches in one
 * repeatable-read transaction, so every column is counted over the same rows.
 */
export async function profileObject(
  q: Queryable,
  source: string,
  wanted: string[],
): Promise<Omit<BaselineReport, 'reportId' | 'tableId' | 'profiledAt'>> {
  const live = await describeWarehouseObject(q, source);
  if (!live) throw new Error(`the warehouse object ${source} does not exist`);
  const columns = live.filter((c) => wanted.length === 0 || wanted.includes(c.name));
  const profiled: BaselineReport['columns'] = [];
  let rowCount = 0;
  for (let start = 0; start === 0 || start < columns.length; start += BASELINE_COLUMNS_PER_STATEMENT) {
    const batch = columns.slice(start, start + BASELINE_COLUMNS_PER_STATEMENT);
    const selects = batch.flatMap((c, i) => [
      `count(*) - count(${quoteIdent(c.name)}) AS n${i}`,
      `count(DISTINCT ${quoteIdent(c.name)}) AS d${i}`,
    ]);
    const [row] = await q.query<Record<string, string | number>>(
      `SELECT ${['count(*) AS row_count', ...selects].join(', ')} FROM ${quoteSource(source)}`,
    );
    if (start === 0) rowCount = Number(row?.row_count ?? 0);
    profiled.push(
      ...batch.map((c, i) => ({
        name: c.name,
        type: c.type,
        nullCount: Number(row?.[`n${i}`] ?? 0),
        distinctCount: Number(row?.[`d${i}`] ?? 0),
      })),
    );
  }
  return {
    source,
    rowCount,
    columns: profiled,
    missingColumns: wanted.filter((name) => !live.some((c) => c.name === name)),
  };
}

export async function runBaselineJob(job: Job, env: JobEnv): Promise<BaselineReport> {
  const source = job.params['source'];
  const wanted = job.params['columns'];
  if (typeof source !== 'string') throw new Error('the baseline job names no source');
  const columns = Array.isArray(wanted) ? wanted.filter((c): c is string => typeof c === 'string') : [];
  await assertWithinEmbedded(env.db, env.db, [{ kind: 'warehouse', source }], 'The baseline profile');
  // PGlite has one connection: a transaction would hold every other request until the last batch, so
  // there each batch is a statement of its own (other requests run between them).
  const profile =
    env.db.kind === 'postgres'
      ? await env.db.transaction(async (tx) => {
          await tx.exec('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
          return profileObject(tx, source, columns);
        })
      : await profileObject(env.db, source, columns);
  return {
    reportId: job.id,
    tableId: job.tableId,
    profiledAt: new Date(env.clock()).toISOString(),
    ...profile,
  };
}
