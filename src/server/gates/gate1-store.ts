// gate1.yml per table, as numbered versions (1, 2, …): each apply stores the next one and sets
// gds.tables.gate1_version, which makes every earlier proof stale.
import type { Gate1Document } from '../../core/gate1/index.js';
import { validateGate1 } from '../../core/gate1/index.js';
import type { Queryable } from '../db/handle.js';
import { copiedRows } from '../db/handle.js';

export interface Gate1Version {
  version: number;
  content: string;
  createdBy: string;
  createdAt: string;
}

interface Row {
  version: number;
  content: string;
  created_by: string;
  created_at: Date | string;
}

const toVersion = (row: Row): Gate1Version => ({
  version: row.version,
  content: row.content,
  createdBy: row.created_by,
  createdAt: new Date(row.created_at).toISOString(),
});

const COLUMNS = 'version, content, created_by, created_at';

/**
 * The newest version of several tables at once, by table id (a table without one is absent). Each table's
 * newest is read from the primary key's end (a lateral LIMIT 1 per id), so a page reads one version a table
 * however many its history holds: `DISTINCT ON` over `table_id = ANY(…)` read, sorted and dropped every
 * version of each (a page of 500 tables with 10 versions each: 23-30 ms of PostgreSQL against 1.5 ms; PGlite
 * 34.7 ms against 9.1 ms, and at one version a table 6.7 ms against 7.5 ms: 500 index probes cost it 0.9 ms
 * more than one scan while there is no history to skip, which a second version a table already outweighs).
 */
export async function currentGate1s(q: Queryable, tableIds: string[]): Promise<Map<string, Gate1Version>> {
  if (tableIds.length === 0) return new Map();
  const rows = await copiedRows<Row & { table_id: string }>(
    q,
    `SELECT page.at, newest.table_id, newest.version, newest.content, newest.created_by, newest.created_at
       FROM unnest($1::text[]) WITH ORDINALITY AS page(id, at)
       CROSS JOIN LATERAL (
         SELECT table_id, ${COLUMNS} FROM gds.gate1_versions
          WHERE table_id = page.id ORDER BY version DESC LIMIT 1
       ) newest`,
    // The ids' own order, in which the rows come: no sort of the contents by table_id (1 ms a page on PGlite).
    'at',
    [tableIds],
    { table_id: 'text', version: 'int4', content: 'text', created_by: 'text', created_at: 'timestamptz' },
  );
  return new Map(rows.map((row) => [row.table_id, toVersion(row)]));
}

/** The newest version, or null when none was ever applied. */
export async function currentGate1(q: Queryable, tableId: string): Promise<Gate1Version | null> {
  const [row] = await q.query<Row>(
    `SELECT ${COLUMNS} FROM gds.gate1_versions WHERE table_id = $1 ORDER BY version DESC LIMIT 1`,
    [tableId],
  );
  return row ? toVersion(row) : null;
}

export async function gate1Version(
  q: Queryable,
  tableId: string,
  version: number,
): Promise<Gate1Version | null> {
  const [row] = await q.query<Row>(
    `SELECT ${COLUMNS} FROM gds.gate1_versions WHERE table_id = $1 AND version = $2`,
    [tableId, version],
  );
  return row ? toVersion(row) : null;
}

/** Every version, newest first, without content. */
export async function listGate1Versions(
  q: Queryable,
  tableId: string,
): Promise<Array<Omit<Gate1Version, 'content'>>> {
  const rows = await q.query<Row>(
    `SELECT ${COLUMNS} FROM gds.gate1_versions WHERE table_id = $1 ORDER BY version DESC`,
    [tableId],
  );
  return rows.map((r) => {
    const { content: _content, ...rest } = toVersion(r);
    return rest;
  });
}

/** Stores `content` as the next version and bumps the table's gate1_version; returns the version. */
export async function storeGate1Version(
  q: Queryable,
  input: { tableId: string; content: string; createdBy: string; createdAt: string },
): Promise<number> {
  const [row] = await q.query<{ version: number }>(
    `UPDATE gds.tables SET gate1_version = gate1_version + 1, updated_at = $2 WHERE id = $1 RETURNING gate1_version AS version`,
    [input.tableId, input.createdAt],
  );
  if (!row) throw new Error(`storeGate1Version: no table ${input.tableId}`);
  await q.query(
    `INSERT INTO gds.gate1_versions (table_id, version, content, created_by, created_at) VALUES ($1, $2, $3, $4, $5)`,
    [input.tableId, row.version, input.content, input.createdBy, input.createdAt],
  );
  return row.version;
}

/**
 * The rules Gate 1 runs: the current version parsed against the table's columns today, or no
 * declared check when none was applied. A stored version that no longer validates (a column was
 * dropped by a replace) still runs what it can; the runner reports checks it cannot run.
 */
export function rulesOf(content: string | null, columns: string[]): Gate1Document {
  if (content === null) return {};
  return (
    validateGate1(content, { fileName: 'gate1.yml', columns }).document ??
    validateGate1(content, { fileName: 'gate1.yml' }).document ??
    {}
  );
}
