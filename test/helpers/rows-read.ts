// How many rows a server read reads: each statement it runs, run again under EXPLAIN ANALYZE, and the rows its
// scans touched summed (the rows they returned over every loop, and those their filters removed). For the
// tests that a read of the newest rows stays bounded by them however long the history behind them grows.
import type { Queryable } from '../../src/server/db/handle.js';
import type { TestServer } from './server.js';

interface PlanNode {
  'Node Type': string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

function scanned(node: PlanNode): number {
  const own = node['Node Type'].includes('Scan')
    ? (node['Actual Rows'] ?? 0) * (node['Actual Loops'] ?? 1) +
      (node['Rows Removed by Filter'] ?? 0) * (node['Actual Loops'] ?? 1) +
      (node['Rows Removed by Index Recheck'] ?? 0)
    : 0;
  return own + (node.Plans ?? []).reduce((sum, child) => sum + scanned(child), 0);
}

/**
 * A Queryable over the server's database that answers as the server's would and counts, for each SELECT,
 * UPDATE or WITH it runs, the rows its scans touched (`read()`: the sum over every statement since the last reset).
 */
export function countingQueryable(server: Pick<TestServer, 'sql'>): Queryable & {
  read(): number;
  reset(): void;
} {
  let read = 0;
  const query = async <T>(sql: string, params?: unknown[]): Promise<T[]> => {
    if (/^\s*(SELECT|UPDATE|WITH)\b/i.test(sql)) {
      // EXPLAIN ANALYZE runs the statement: an UPDATE counted so is run once here and once below, which a
      // test of an idempotent UPDATE (closing what is open) does not mind.
      const [row] = await server.sql<Record<string, unknown>>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`,
        params,
      );
      const plan = Object.values(row ?? {})[0];
      const parsed = (typeof plan === 'string' ? JSON.parse(plan) : plan) as Array<{ Plan: PlanNode }>;
      read += parsed.reduce((sum, p) => sum + scanned(p.Plan), 0);
    }
    return server.sql<T>(sql, params);
  };
  return {
    query,
    exec: async (sql: string) => void (await server.sql(sql)),
    read: () => read,
    reset: () => void (read = 0),
  } as Queryable & { read(): number; reset(): void };
}
