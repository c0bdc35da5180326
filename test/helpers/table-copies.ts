// A large workspace in one statement: `count` copies of a seeded table, named `${prefix}_1…`, each created
// a millisecond after the one before (the list's order). For the 100,000-table bench and the paging tests.
// `overrides`: SQL expressions of other columns (`g` is the copy's number).
import type { TestServer } from './server.js';

export async function copyTable(
  server: Pick<TestServer, 'sql'>,
  templateId: string,
  count: number,
  prefix: string,
  overrides: Record<string, string> = {},
): Promise<void> {
  const columns = (
    await server.sql<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns
        WHERE table_schema = 'gds' AND table_name = 'tables' AND is_generated = 'NEVER'
        ORDER BY ordinal_position`,
    )
  ).map((c) => c.column_name);
  const replaced: Record<string, string> = {
    id: `'tbl_${prefix}_' || g`,
    slug: `'${prefix}_' || g`,
    name: `'${prefix}_' || g`,
    governance_id: `'tbl_${prefix}_' || g`,
    created_at: `created_at + g * interval '1 millisecond'`,
    ...overrides,
  };
  await server.sql(
    `INSERT INTO gds.tables (${columns.join(', ')})
     SELECT ${columns.map((c) => replaced[c] ?? c).join(', ')}
       FROM gds.tables, generate_series(1, ${count}) AS g
      WHERE id = $1`,
    [templateId],
  );
}
