// A governed table as the governance engine sees it: one row of gds.tables with its lifecycle state
// and the four versions a review proof is checked against (definition, gate1.yml, data, contract).
import type { GovernanceArtifact } from '../../core/artifacts/index.js';
import type { LifecycleState } from '../../core/lifecycle/index.js';
import type { Queryable } from '../db/handle.js';
import { copiedRows } from '../db/handle.js';
import { WhereClause } from '../db/where.js';
import { slugOf } from '../../core/table-slug.js';
import { notFound } from '../errors.js';
import type { Column } from '../records/columns.js';
import { afterKey, keyedPage, matchedPage } from '../list-cursor.js';
import type { ListKey, ListOrder, MatchKey } from '../list-cursor.js';

export interface TableRow {
  id: string;
  workspaceId: string;
  slug: string;
  name: string;
  mode: 'MODE_A' | 'MODE_B';
  state: LifecycleState;
  gateMode: 'ENFORCING' | 'ADVISORY';
  environmentLabel: string;
  connectorId: string | null;
  /** `schema.table` of the warehouse object (Mode A). */
  source: string | null;
  ownerId: string;
  columns: Column[];
  /** Stable across pushes (the `replaceId` of later pushes). */
  governanceId: string;
  definitionVersion: number;
  gate1Version: number;
  dataVersion: number;
  /** The semantic contract's revision: bumped by every change of the live contract (a review proof stamps it). */
  contractVersion: number;
  grain: string | null;
  grainKeyColumns: string[] | null;
  /** The parsed artifact last pushed (Mode A); null for seeded and Mode B tables. */
  artifact: (GovernanceArtifact & { fileName: string }) | null;
  /** The dbt manifest checksum seen on the last recertification signal (drift detection). */
  definitionChecksum: string | null;
  /** The project (`gds apply`) that owns the table; null for a table registered otherwise. */
  project: string | null;
  createdAt: string;
  updatedAt: string;
}

interface Row {
  id: string;
  workspace_id: string;
  slug: string;
  name: string;
  mode: 'MODE_A' | 'MODE_B';
  state: LifecycleState;
  gate_mode: 'ENFORCING' | 'ADVISORY';
  environment_label: string;
  connector_id: string | null;
  source: string | null;
  owner_id: string;
  columns: Column[];
  governance_id: string | null;
  definition_version: number;
  gate1_version: number;
  data_version: number;
  contract_version: number;
  grain: string | null;
  grain_key_columns: string[] | null;
  artifact: TableRow['artifact'];
  definition_checksum: string | null;
  project: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

const TABLE_COLUMN_NAMES = [
  'id',
  'workspace_id',
  'slug',
  'name',
  'mode',
  'state',
  'gate_mode',
  'environment_label',
  'connector_id',
  'source',
  'owner_id',
  'columns',
  'governance_id',
  'definition_version',
  'gate1_version',
  'data_version',
  'contract_version',
  'grain',
  'grain_key_columns',
  'artifact',
  'definition_checksum',
  'project',
  'created_at',
  'updated_at',
] as const satisfies ReadonlyArray<keyof Row>;

/** The select list that `toTableRow` reads. */
export const TABLE_COLUMNS = TABLE_COLUMN_NAMES.join(', ');

export function toTableRow(row: Row): TableRow {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    slug: row.slug,
    name: row.name,
    mode: row.mode,
    state: row.state,
    gateMode: row.gate_mode,
    environmentLabel: row.environment_label,
    connectorId: row.connector_id,
    source: row.source,
    ownerId: row.owner_id,
    columns: row.columns,
    governanceId: row.governance_id ?? row.id,
    definitionVersion: Number(row.definition_version),
    gate1Version: Number(row.gate1_version),
    dataVersion: Number(row.data_version),
    contractVersion: Number(row.contract_version),
    grain: row.grain,
    grainKeyColumns: row.grain_key_columns,
    artifact: row.artifact,
    definitionChecksum: row.definition_checksum,
    project: row.project ?? null,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

export interface LoadOptions {
  /**
   * Takes the row's lock (`FOR NO KEY UPDATE`) until the transaction `q` belongs to ends: every write
   * that compares with a table's stored state and then writes loads it so, and the writes of one table
   * follow one another (a parallel identical write then finds the first one's result and changes
   * nothing). On PGlite, whose transactions already run one at a time, it is the same statement.
   */
  lock?: boolean;
}

/** An active table of the workspace, or null (unknown, soft-deleted, inactive or another workspace's). */
export async function findTable(
  q: Queryable,
  workspaceId: string,
  tableId: string,
  options: LoadOptions = {},
): Promise<TableRow | null> {
  const [row] = await q.query<Row>(
    `SELECT ${TABLE_COLUMNS} FROM gds.tables WHERE id = $1 AND workspace_id = $2 AND active${options.lock ? ' FOR NO KEY UPDATE' : ''}`,
    [tableId, workspaceId],
  );
  return row ? toTableRow(row) : null;
}

/** The active tables of these ids in the workspace, in one read (ids not found are left out). */
export async function findTables(
  q: Queryable,
  workspaceId: string,
  tableIds: readonly string[],
): Promise<TableRow[]> {
  if (tableIds.length === 0) return [];
  const rows = await q.query<Row>(
    `SELECT ${TABLE_COLUMNS} FROM gds.tables WHERE id = ANY($1::text[]) AND workspace_id = $2 AND active`,
    [[...tableIds], workspaceId],
  );
  return rows.map(toTableRow);
}

/** Like `findTable`, but 404 `table_not_found` when there is no such active table. */
export async function loadTable(
  q: Queryable,
  workspaceId: string,
  tableId: string,
  options: LoadOptions = {},
): Promise<TableRow> {
  const table = await findTable(q, workspaceId, tableId, options);
  if (!table) {
    throw notFound('table_not_found', `Table not found: ${tableId} (list tables with \`gds list\`)`, {
      tableId,
    });
  }
  return table;
}

/** A row of the table list: the list's own columns only, never a table's artifact or columns. */
export interface TableListItem {
  id: string;
  name: string;
  mode: 'MODE_A' | 'MODE_B';
  state: LifecycleState;
  gateMode: 'ENFORCING' | 'ADVISORY';
  environmentLabel: string;
  source: string | null;
  connectorId: string | null;
  artifactFile: string | null;
  project: string | null;
}

export interface TableListQuery {
  workspaceId: string;
  state?: string | undefined;
  /** Only the tables holding one of these names (case-insensitive, exact). */
  names?: string[] | undefined;
  /** The environments the caller may see; null: every one. */
  environments: string[] | null;
  /** At most this many rows (and one more is read, to know whether another page follows); absent: all. */
  limit?: number | undefined;
  /** The key of the last row of the previous page. */
  after?: ListKey | undefined;
  /** Oldest first (the default) or newest first, by (created_at, id) either way. */
  order?: ListOrder | undefined;
  /**
   * Only the tables whose name (case-insensitive) or id starts with this, ordered by the lowercased name (or,
   * for a table matched by its id alone, the id): `prefixTablePage`.
   */
  prefix?: string | undefined;
  /** With `prefix`, the key of the last row of the previous page. */
  afterMatch?: MatchKey | undefined;
}

/**
 * The names of the parameter `names`, lowered by the database as the index tables_by_name lowers a table's
 * name (JavaScript's lowering is not always PostgreSQL's).
 */
const lowerNames = (names: string) => `ARRAY(SELECT lower(n) FROM unnest(${names}::text[]) AS n)`;

/**
 * The tables a list reads: with names (the parameter `names`), each name's tables found by the index
 * tables_by_name, a lookup a name. As a filter, the planner (no statistics of lower(name): the index is
 * partial) walks tables_listed in order instead, reading a workspace of 100,000 tables for a few names
 * (50-280 ms on PostgreSQL, 0.5 ms so). The filter on the names stays in the query's WHERE: it is what the
 * list means; this is only the way in.
 */
function listedTables(workspace: string, names: string | undefined): string {
  if (names === undefined) return 'gds.tables';
  return `(SELECT DISTINCT lower(n) AS wanted FROM unnest(${names}::text[]) AS n) AS named
          CROSS JOIN LATERAL (SELECT * FROM gds.tables
                               WHERE workspace_id = ${workspace} AND active AND lower(name) = named.wanted
                               OFFSET 0) AS tables`;
}

/** The list's columns, each named as TableListItem names it. */
const LISTED_COLUMNS = `id, name, mode, state, gate_mode AS "gateMode", environment_label AS "environmentLabel", source,
            connector_id AS "connectorId", artifact->>'fileName' AS "artifactFile", project`;

/** How copiedRows reads the columns a table's list row and held row share. */
const TABLE_ROW_TYPES = {
  id: 'text',
  name: 'text',
  mode: 'text',
  state: 'text',
  gateMode: 'text',
  environmentLabel: 'text',
  connectorId: 'text',
  source: 'text',
  project: 'text',
} as const;

const LISTED_TYPES = { ...TABLE_ROW_TYPES, artifactFile: 'text' } as const;

/**
 * What a list reads (`from`, listedTables) and its filters (`where`): the workspace, then a state, names and
 * the environments the caller may see, each written only when given (db/where.ts says why: the tables in a
 * rare state were found by walking the workspace's every table, not tables_listed_by_state). A page's other
 * parameters are numbered after them.
 */
function listedFilters(query: TableListQuery): { from: string; where: WhereClause<string | string[]> } {
  const where = new WhereClause<string | string[]>();
  const workspace = where.param(query.workspaceId);
  where
    .and(`workspace_id = ${workspace}`)
    .and('active')
    .given(query.state, (p) => `state = ${p}::text`);
  const names = query.names === undefined ? undefined : where.param(query.names);
  if (names !== undefined) where.and(`lower(name) = ANY(${lowerNames(names)})`);
  where.given(query.environments, (p) => `environment_label = ANY(${p}::text[])`);
  return { from: listedTables(workspace, names), where };
}

/**
 * One page of a workspace's active tables, oldest first (or newest first), read by key (created_at, id) through the
 * tables_listed index: its cost is the page, not the workspace, and the heavy jsonb columns stay unread. Read by
 * copiedRows: on PGlite the whole list of 2,047 tables costs its database thread 15 ms instead of 21, a page of
 * 1,000 about 3.5 ms less (docs/bench.md). With a prefix, `prefixTablePage`'s page instead.
 */
export async function listTablePage(
  q: Queryable,
  query: TableListQuery,
): Promise<{ tables: TableListItem[]; next: ListKey | MatchKey | null }> {
  if (query.prefix !== undefined) return prefixTablePage(q, { ...query, prefix: query.prefix });
  // Newest first, the same index read backwards (a btree serves both directions), the cursor's key above.
  const [past, desc] = query.order === 'newest' ? (['<', ' DESC'] as const) : (['>', ''] as const);
  const { from, where } = listedFilters(query);
  const after = afterKey(where.params, '(created_at, id)', query.after, past);
  const rows = await copiedRows<TableListItem & { created_key: string }>(
    q,
    `SELECT ${LISTED_COLUMNS},
            to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_key
       FROM ${from}
      WHERE ${where.sql}${after.condition}
      ORDER BY created_at${desc}, id${desc}
      ${query.limit === undefined ? '' : `LIMIT ${query.limit + 1}`}`,
    // created_key is created_at to the microsecond (all it holds), in UTC: in bytes' order, its time's.
    `created_key COLLATE "C"${desc}, id${desc}`,
    after.params,
    { ...LISTED_TYPES, created_key: 'text' },
  );
  const { page, next } = keyedPage(rows, query.limit);
  return { tables: page.map(({ created_key: _, ...table }) => table), next };
}

/**
 * What a table is matched by with a prefix (the parameter `prefix`): its name lowercased (as the index
 * tables_by_name_prefix holds it), or its id (tables_by_id_prefix), each in the "C" collation, whose order is
 * the code points', so that every text starting with the prefix lies in one range of the index: [prefix,
 * prefix || U+10FFFF). A range, not LIKE: the planner turns `LIKE 'abc%'` into one only in the "C" collation
 * and for a pattern it knows as it plans, and the prefix's `%`, `_` and `\` would need escaping. (A name
 * whose next character after the prefix is U+10FFFF itself, a noncharacter, is left out.)
 */
const MATCHED_NAME = 'lower(name) COLLATE "C"';
const MATCHED_ID = 'id COLLATE "C"';
const startsWithPrefix = (matched: string, prefix: string) =>
  `(${matched} >= lower(${prefix}::text) AND ${matched} < (lower(${prefix}::text) || chr(1114111)))`;

/**
 * One page of the tables whose name (case-insensitive) or id starts with `prefix`, ordered by what matched
 * (the lowercased name; the id for a table whose name does not match), then id, read by key (matched, id):
 * how TAB completes a table. Two ordered reads of an index each, the names' and the ids', each stopping at
 * the page's end, then merged: its cost is the page's, at 100 tables or 100,000, however many match.
 */
async function prefixTablePage(
  q: Queryable,
  query: TableListQuery & { prefix: string },
): Promise<{ tables: TableListItem[]; next: MatchKey | null }> {
  const limit = query.limit === undefined ? '' : `LIMIT ${query.limit + 1}`;
  const { from, where } = listedFilters(query);
  const prefix = where.param(query.prefix);
  const afterMatch =
    query.afterMatch === undefined
      ? undefined
      : `(${where.param(query.afterMatch.matched)}::text, ${where.param(query.afterMatch.id)}::text)`;
  const after = (matched: string) => (afterMatch === undefined ? '' : `AND (${matched}, id) > ${afterMatch}`);
  const matching = (matched: string, also: string) =>
    `(SELECT ${LISTED_COLUMNS}, ${matched} AS matched
        FROM ${from}
       WHERE ${where.sql} AND ${startsWithPrefix(matched, prefix)} ${also} ${after(matched)}
       ORDER BY ${matched}, id ${limit})`;
  const rows = await copiedRows<TableListItem & { matched: string }>(
    q,
    `SELECT * FROM (${matching(MATCHED_NAME, '')}
                    UNION ALL
                    ${matching(MATCHED_ID, `AND NOT ${startsWithPrefix(MATCHED_NAME, prefix)}`)}) AS matching
      ORDER BY matched COLLATE "C", id ${limit}`,
    'matched COLLATE "C", id',
    where.params,
    { ...LISTED_TYPES, matched: 'text' },
  );
  const { page, next } = matchedPage(rows, query.limit, (row) => row.matched);
  return { tables: page.map(({ matched: _, ...table }) => table), next };
}

/**
 * What `GET /api/held-tables` reads of a table: its list row, its owner (who may replace it or set its
 * contract's intent) and what its held definition is made of. `columns` are its registered columns only when
 * it has no artifact, else none: its definition is then the artifact's (`heldDefinition`), and a page of 500
 * tables reads about 250 kB less.
 */
export type HeldTableRow = Pick<
  TableRow,
  | 'id'
  | 'name'
  | 'mode'
  | 'state'
  | 'gateMode'
  | 'environmentLabel'
  | 'connectorId'
  | 'source'
  | 'ownerId'
  | 'governanceId'
  | 'definitionVersion'
  | 'gate1Version'
  | 'contractVersion'
  | 'artifact'
  | 'columns'
  | 'project'
>;

/**
 * One page of an environment's active tables, oldest first (listTablePage's order and cursor), as
 * `HeldTableRow`s with each one's artifact file: one query walking the tables_listed_by_environment index from
 * the cursor, so a page reads its own rows only (listTablePage's list of environments makes the database read
 * and sort the environment's every row for each page, and its whole rows then took a second query).
 * The artifact is read as the text the database keeps beside it (`artifact_text`, migration 64), not made
 * from its jsonb at each read, and its file name is taken from it: a plan's eight requests, PGlite's database
 * thread -14 ms (lower in 10 of 10), PostgreSQL's backends -5 ms (10 of 10) (docs/bench.md, twenty-second pass).
 */
export async function environmentTablePage(
  q: Queryable,
  query: {
    workspaceId: string;
    environment: string;
    limit: number;
    after?: { createdAt: string; id: string };
    filter?: HeldFilter;
  },
): Promise<{
  tables: Array<{ table: HeldTableRow; artifactFile: string | null }>;
  next: { createdAt: string; id: string } | null;
}> {
  const filter = query.filter;
  // The filter's parameters from $3 (as heldLeftOut's), the cursor's after them.
  const after = afterKey(
    [query.workspaceId, query.environment, ...(filter === undefined ? [] : heldFilterParams(filter))],
    '(created_at, id)',
    query.after,
  );
  // Each row as HeldTableRow names its fields (aliases), so no object is made again a row.
  const rows = await copiedRows<HeldTableRow & { created_key: string }>(
    q,
    `SELECT id, name, mode, state, gate_mode AS "gateMode", environment_label AS "environmentLabel",
            connector_id AS "connectorId", source, owner_id AS "ownerId",
            coalesce(governance_id, id) AS "governanceId", definition_version AS "definitionVersion",
            gate1_version AS "gate1Version", contract_version AS "contractVersion",
            artifact_text AS artifact, CASE WHEN artifact IS NULL THEN columns ELSE '[]' END AS columns, project,
            to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_key
       FROM ${filter === undefined ? 'gds.tables' : heldFiltered(after.condition, query.limit + 1)}
      WHERE workspace_id = $1 AND active AND environment_label = $2${after.condition}
      ORDER BY created_at, id
      LIMIT ${query.limit + 1}`,
    'created_key COLLATE "C", id',
    after.params,
    {
      ...TABLE_ROW_TYPES,
      ownerId: 'text',
      governanceId: 'text',
      definitionVersion: 'int4',
      gate1Version: 'int4',
      contractVersion: 'int4',
      artifact: 'json',
      columns: 'jsonb',
      created_key: 'text',
    },
  );
  const { page, next } = keyedPage(rows, query.limit);
  return { tables: page.map((table) => ({ table, artifactFile: table.artifact?.fileName ?? null })), next };
}

/**
 * What `GET /api/held-tables` may be narrowed to (`gds plan` of a project in a large environment): the tables
 * owned by one of `projects` or by a project whose id starts with `projectPrefix`, those with no project whose
 * artifact's file name starts with `filePrefix` (case-insensitive), and those whose name, slug or source's
 * object is one of `names` (case-insensitive). Any table matching one of them.
 */
export interface HeldFilter {
  projects: string[];
  projectPrefix: string | null;
  filePrefix: string | null;
  names: string[];
}

const PROJECT_C = 'project COLLATE "C"';
const FILE_C = `lower(artifact->>'fileName') COLLATE "C"`;
const inRange = (matched: string, prefix: string) =>
  `(${matched} >= ${prefix} AND ${matched} < (${prefix} || chr(1114111)))`;

/**
 * The ids of a filter's tables, its parameters from `$at` on (projects, project prefix, file prefix in lower
 * case, names, and the names' slugs), each set found by its index (tables_project, tables_by_project_prefix,
 * tables_by_file_prefix, and a lookup a name in tables_by_name, tables_active_slug and
 * tables_by_source_object): its cost is the tables it finds, not the environment's (a filter in the WHERE had
 * the planner walk the environment's every row). Each part keeps only the active tables of the environment ($2)
 * and, with `afterCursor` (a page's), only those after it, so a later page neither de-duplicates nor reads by
 * its key the tables earlier pages answered (a no-change plan of 2,000 models: PGlite's database thread -20 ms
 * over its four later pages; docs/bench.md, "Plans at once, fifty-second session"). Each table once, with the
 * key a page is ordered by (created_at, id).
 */
function heldIds(at: number, afterCursor = ''): string {
  const [projects, projectPrefix, filePrefix, names, slugs] = [0, 1, 2, 3, 4].map((i) => `$${at + i}`);
  const live = `workspace_id = $1 AND active AND environment_label = $2${afterCursor}`;
  return `SELECT DISTINCT id, created_at FROM (
           SELECT id, created_at FROM gds.tables
            WHERE ${live} AND project IS NOT NULL AND project = ANY(${projects}::text[])
           UNION ALL
           SELECT id, created_at FROM gds.tables
            WHERE ${live} AND project IS NOT NULL
              AND ${inRange(PROJECT_C, `${projectPrefix}::text`)}
           UNION ALL
           SELECT id, created_at FROM gds.tables
            WHERE ${live} AND project IS NULL AND ${inRange(FILE_C, `${filePrefix}::text`)}
           UNION ALL
           SELECT found.id, found.created_at FROM unnest(${names}::text[], ${slugs}::text[]) AS n(name, slug)
            CROSS JOIN LATERAL (
              SELECT id, created_at FROM gds.tables WHERE ${live} AND lower(name) = lower(n.name)
              UNION ALL
              SELECT id, created_at FROM gds.tables WHERE ${live} AND slug = n.slug
              UNION ALL
              SELECT id, created_at FROM gds.tables WHERE ${live} AND lower(split_part(source, '.', 2)) = lower(n.name)
              OFFSET 0) AS found
         ) AS matching`;
}

/**
 * A held-tables page's tables with a filter (its parameters from $3): each found, the page's first `limit` of
 * them taken by their key alone, and only those read by their id. `after`, the page's cursor as a condition
 * (afterKey), is one of each part of heldIds too. Read whole before the limit, every table of the filter after
 * the cursor was read by its id and sorted with its artifact: a no-change plan of 2,000 models in pages of
 * 500 read 5,200 tables for its 2,040; now its five pages cost PGlite's database thread 9-21 ms less and
 * PostgreSQL's backend 22 -> 12 ms (docs/bench.md, "Plans at once, fifty-third session").
 */
const heldFiltered = (
  after: string,
  limit: number,
) => `(SELECT id AS wanted FROM (${heldIds(3, after)}) AS matched
          ORDER BY created_at, id LIMIT ${limit}) AS held
        CROSS JOIN LATERAL (SELECT * FROM gds.tables WHERE id = held.wanted OFFSET 0) AS tables`;

function heldFilterParams(filter: HeldFilter): Array<string | string[] | null> {
  return [
    filter.projects,
    filter.projectPrefix,
    filter.filePrefix === null ? null : filter.filePrefix.toLowerCase(),
    filter.names,
    filter.names.map(slugOf),
  ];
}

/**
 * How many Mode A tables of the environment a filter leaves out, with a project and without: what a plan
 * reading only its own tables says it leaves alone. One count of the environment's entries in
 * tables_mode_a_by_environment (an index-only scan once the table is vacuumed), the only read of a filtered
 * plan that grows with them.
 */
export async function heldLeftOut(
  q: Queryable,
  query: { workspaceId: string; environment: string; filter: HeldFilter },
): Promise<{ otherProjects: number; byHand: number }> {
  const [row] = await q.query<{ otherProjects: number; byHand: number }>(
    `SELECT count(*) FILTER (WHERE project IS NOT NULL)::int AS "otherProjects",
            count(*) FILTER (WHERE project IS NULL)::int AS "byHand"
       FROM gds.tables
      WHERE workspace_id = $1 AND active AND environment_label = $2 AND mode = 'MODE_A'
        AND id NOT IN (SELECT id FROM (${heldIds(3)}) AS held)`,
    [query.workspaceId, query.environment, ...heldFilterParams(query.filter)],
  );
  return { otherProjects: row?.otherProjects ?? 0, byHand: row?.byHand ?? 0 };
}

/**
 * How many tables the list of `query` holds in all (its first page says so). Filtered by a state alone (and
 * the environments seen), counted over the page's keyed read, in its order: a generic plan (afterKey says when)
 * takes a state for half the workspace's tables, as it cannot know which, and counted them by reading the
 * whole table; kept in the page's order, it reads them from tables_listed_by_state, an index-only scan, as a
 * custom plan does (a rare state's three tables of 20,000: 3 rows read instead of 20,000).
 */
export async function countTables(q: Queryable, query: TableListQuery): Promise<number> {
  const keyed = query.state !== undefined && query.names === undefined && query.prefix === undefined;
  const { from, where } = listedFilters(query);
  where.given(
    query.prefix,
    (prefix) => `(${startsWithPrefix(MATCHED_NAME, prefix)} OR ${startsWithPrefix(MATCHED_ID, prefix)})`,
  );
  const [row] = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM ${from}
      WHERE ${where.sql}
      ${keyed ? 'ORDER BY created_at, id' : ''}) AS listed`,
    where.params,
  );
  return row?.n ?? 0;
}
