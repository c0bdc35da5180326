// Mode B tables with many rows, for the `gds records` tests and benches: a table of every column type and
// rows whose values are the hard ones for CSV and JSON (commas, quotes, line breaks, surrounding spaces,
// empty strings beside nulls, control characters, U+2028, emoji, big and negative numbers).
import type { TestServer } from './server.js';

export interface TestColumn {
  name: string;
  type: 'text' | 'integer' | 'numeric' | 'boolean' | 'date' | 'timestamp';
  required: boolean;
}

export const WIDE_COLUMNS: TestColumn[] = [
  { name: 'sku', type: 'text', required: true },
  { name: 'label', type: 'text', required: false },
  { name: 'qty', type: 'integer', required: false },
  { name: 'price', type: 'numeric', required: false },
  { name: 'active', type: 'boolean', required: false },
  { name: 'day', type: 'date', required: false },
  { name: 'seen_at', type: 'timestamp', required: false },
];

const HARD_LABELS = [
  'plain',
  'comma, inside',
  'quote " inside',
  '"quoted"',
  'line\nbreak',
  'crlf\r\nbreak',
  ' leading space',
  'trailing space ',
  '',
  'tab\there',
  'C1 \u0085 and DEL \u007f',
  'separator \u2028 here',
  'emoji 🚀 ünïcödé',
  '=1+1',
  'null',
];

/** Row `i` of the wide table: every value derived from i, nulls and hard strings among them. */
export function wideRow(i: number): Record<string, unknown> {
  const label = i % 17 === 5 ? null : `${HARD_LABELS[i % HARD_LABELS.length]} #${i}`;
  return {
    sku: `SKU-${String(i).padStart(7, '0')}`,
    label: i % 29 === 3 ? '' : label,
    qty: i % 11 === 0 ? null : (i % 7 === 0 ? -1 : 1) * i * 1_000_003,
    price: i % 13 === 0 ? null : Math.round(i * 3.14159 * 100) / 100,
    active: i % 19 === 0 ? null : i % 2 === 0,
    day:
      i % 23 === 0
        ? null
        : `2024-${String((i % 12) + 1).padStart(2, '0')}-${String((i % 28) + 1).padStart(2, '0')}`,
    seen_at: `2024-06-01T12:${String(i % 60).padStart(2, '0')}:00.000Z`,
  };
}

/** A new active Mode B table in the main workspace's dev environment, owned by the OWNER. */
export async function createModeBTable(
  server: TestServer,
  name: string,
  columns: TestColumn[] = WIDE_COLUMNS,
): Promise<string> {
  const id = `tbl_${name.replace(/[^a-z0-9]/gi, '')}${Date.now().toString(36)}`;
  const now = new Date().toISOString();
  await server.sql(
    `INSERT INTO gds.tables (id, workspace_id, slug, name, mode, state, gate_mode, environment_label,
       connector_id, source, owner_id, columns, active, created_at, updated_at, governance_id)
     VALUES ($1, $2, $3, $3, 'MODE_B', 'CERTIFIED', 'ADVISORY', 'dev', NULL, NULL, $4, $5, true, $6, $6, $1)`,
    [id, server.ready.workspaceId, name, server.user('OWNER').userId, JSON.stringify(columns), now],
  );
  return id;
}

/** Inserts rows `from`..`to - 1` of `row` into a Mode B table, in order, in batches. */
export async function fillRows(
  server: TestServer,
  tableId: string,
  to: number,
  row: (i: number) => Record<string, unknown> = wideRow,
  from = 0,
): Promise<void> {
  for (let start = from; start < to; start += 5_000) {
    const batch = Array.from({ length: Math.min(5_000, to - start) }, (_, k) => row(start + k));
    await server.sql(
      `INSERT INTO gds.records (table_id, id, data, created_at, updated_at)
       SELECT $1, 'rec_' || md5(random()::text || e.n::text), e.value, now(), now()
         FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS e(value, n) ORDER BY e.n`,
      [tableId, JSON.stringify(batch)],
    );
  }
}

/** Every record of a Mode B table as the service keeps it, in listing order (id and data). */
export async function storedRows(
  server: TestServer,
  tableId: string,
): Promise<Array<{ id: string; data: Record<string, unknown> }>> {
  return server.sql('SELECT id, data FROM gds.records WHERE table_id = $1 ORDER BY seq', [tableId]);
}
