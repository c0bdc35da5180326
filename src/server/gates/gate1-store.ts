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

/**
 * Versions `newestGate1s` has read, by the Db they came from: a version (table id, number) is written once and
 * never changed or removed, so what is kept cannot go stale, whichever server process wrote it. Past HELD_CHARS
 * of text the oldest used leave until half is left (a project of 2,000 models keeps about 3 MB).
 */
const heldVersions = new WeakMap<Queryable, Held>();
const HELD_CHARS = 16 * 1024 * 1024;

/** The versions kept for one Db, by `${tableId} ${version}`, the oldest used first, and their characters. */
interface Held {
  versions: Map<string, Gate1Version>;
  chars: number;
}

/** A copy of `text` that holds no larger string alive (a binary COPY's texts are slices of its whole answer). */
const own = (text: string): string => (' ' + text).slice(1);

const charsOf = (key: string, version: Gate1Version): number =>
  key.length + version.content.length + version.createdBy.length;

function hold(held: Held, tableId: string, version: Gate1Version): void {
  const key = `${tableId} ${version.version}`;
  if (held.versions.has(key)) return;
  const kept = { ...version, content: own(version.content), createdBy: own(version.createdBy) };
  held.versions.set(key, kept);
  held.chars += charsOf(key, kept);
  // Past the bound the oldest used leave until half of it is left, in one pass: a Map's iteration walks the
  // entries deleted before it, so one leaving at a time cost 5.9 µs a version read past the bound, 2.7 so.
  if (held.chars > HELD_CHARS)
    for (const [oldest, gone] of held.versions) {
      if (held.chars <= HELD_CHARS / 2) break;
      held.versions.delete(oldest);
      held.chars -= charsOf(oldest, gone);
    }
}

/**
 * The newest version of each table, as `currentGate1s` answers, for tables whose row says which version that is
 * (`gds.tables.gate1_version`, bumped in the transaction that stores the version): a version read before is
 * answered from what the server keeps, and only the others are read (a table whose row names a version that is
 * not there yet, or none, by the newest there is). A no-change plan's held-tables pages read no gate1.yml
 * after the first plan: its eight requests, paired (10 rounds), PGlite's database thread -25 ms and request
 * thread -14 ms, PostgreSQL's node -10 ms and backends -8 ms (docs/bench.md, "Plans at once, twenty-second
 * pass (server)").
 */
export async function newestGate1s(
  q: Queryable,
  tables: Array<{ id: string; gate1Version: number }>,
): Promise<Map<string, Gate1Version>> {
  let held = heldVersions.get(q);
  if (held === undefined) heldVersions.set(q, (held = { versions: new Map(), chars: 0 }));
  const found = new Map<string, Gate1Version>();
  const missing: string[] = [];
  for (const { id, gate1Version } of tables) {
    const key = `${id} ${gate1Version}`;
    const version = held.versions.get(key);
    if (version === undefined) missing.push(id);
    else {
      held.versions.delete(key); // used now: the last to leave
      held.versions.set(key, version);
      found.set(id, version);
    }
  }
  if (missing.length > 0)
    for (const [id, version] of await currentGate1s(q, missing)) {
      found.set(id, version);
      hold(held, id, version);
    }
  return found;
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
