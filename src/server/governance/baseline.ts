// The auto-baseline job (`gate-baseline-auto`): profiles the warehouse object a definition points at
// and stores the profile as the job's result, the baseline report Gate 3 compares against (the job id is
// the report id).
import type { Queryable } from '../db/index.js';
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

/** Row count, then null and distinct counts per column, in one scan of `source`. */
export async function profileObject(
  q: Queryable,
  source: string,
  wanted: string[],
): Promise<Omit<BaselineReport, 'reportId' | 'tableId' | 'profiledAt'>> {
  const live = await describeWarehouseObject(q, source);
  if (!live) throw new Error(`the warehouse object ${source} does not exist`);
  const columns = live.filter((c) => wanted.length === 0 || wanted.includes(c.name));
  const selects = columns.flatMap((c, i) => [
    `count(*) - count(${quoteIdent(c.name)}) AS n${i}`,
    `count(DISTINCT ${quoteIdent(c.name)}) AS d${i}`,
  ]);
  const [row] = await q.query<Record<string, string | number>>(
    `SELECT ${['count(*) AS row_count', ...selects].join(', ')} FROM ${quoteSource(source)}`,
  );
  return {
    source,
    rowCount: Number(row?.row_count ?? 0),
    columns: columns.map((c, i) => ({
      name: c.name,
      type: c.type,
      nullCount: Number(row?.[`n${i}`] ?? 0),
      distinctCount: Number(row?.[`d${i}`] ?? 0),
    })),
    missingColumns: wanted.filter((name) => !live.some((c) => c.name === name)),
  };
}

export async function runBaselineJob(job: Job, env: JobEnv): Promise<BaselineReport> {
  const source = job.params['source'];
  const wanted = job.params['columns'];
  if (typeof source !== 'string') throw new Error('the baseline job names no source');
  const profile = await profileObject(
    env.db,
    source,
    Array.isArray(wanted) ? wanted.filter((c): c is string => typeof c === 'string') : [],
  );
  return {
    reportId: job.id,
    tableId: job.tableId,
    profiledAt: new Date(env.clock()).toISOString(),
    ...profile,
  };
}
