// `npm run server -- --dbt DIR`: a dbt project's relations in the dev warehouse, so a newcomer can try
// `gds plan/apply --dbt DIR` on their own project. Every model, seed and snapshot that the project reader
// declares becomes an empty table `schema.alias` with its columns (the catalog's types mapped to
// PostgreSQL's, anything else text); a seed's table is filled from its CSV file when DIR is the project.
// Each schema is served by a connector of the main workspace: the one already pointing at it, else a new
// dev connector `dbt-<schema>`, so the declarations' sources resolve as they are. Existing tables are left
// untouched (a restart on the same data keeps them).
import { open, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { PgGrammar } from '../core/artifacts/pg-grammar.js';
import { pgGrammar } from '../core/artifacts/pg-grammar.js';
import { parseCsv } from '../core/dbt/csv.js';
import { isInsideFolder } from '../core/inside-folder.js';
import { declareDbtProject, prepareDbtReader } from '../core/dbt/project.js';
import type { DbtDeclaration } from '../core/dbt/types.js';
import type { Db, Queryable } from './db/handle.js';
import { newId } from './ids.js';
import { describeWarehouseObject, quoteIdent } from './warehouse.js';

const MAX_MANIFEST_BYTES = 512 * 1024 * 1024;
const MAX_SEED_BYTES = 64 * 1024 * 1024;

export interface DbtWarehouseTable {
  uniqueId: string;
  resourceType: DbtDeclaration['resourceType'];
  source: string;
  connectorId: string;
  columns: number;
  /** Rows loaded from the seed's CSV file, or written by a model's compiled SQL over them. */
  rows?: number;
  /** False when the table was already there (left untouched). */
  created: boolean;
}

export interface DbtWarehouse {
  dir: string;
  projectName?: string;
  tables: DbtWarehouseTable[];
  refused: Array<{ uniqueId: string; reason: string }>;
  warnings: string[];
}

/** PostgreSQL's type for a warehouse's column type (DuckDB, Snowflake, BigQuery, …); anything else is text. */
export function postgresTypeOf(type: string): string {
  const t = type.trim().toLowerCase();
  const base = t.replace(/\(.*$/, '').trim();
  if (/^(tinyint|smallint|int2|int16|utinyint|usmallint|byteint|int8_t)$/.test(base)) return 'smallint';
  if (/^(int|integer|int4|int32|uinteger|mediumint|serial)$/.test(base)) return 'integer';
  if (/^(bigint|int8|int64|long|ubigint|bigserial)$/.test(base)) return 'bigint';
  if (/^(hugeint|uhugeint|int128|number|numeric|decimal|bignumeric|bigdecimal|dec)$/.test(base)) {
    const precision = /^(?:number|numeric|decimal|dec)\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)$/.exec(t);
    return precision && Number(precision[1]) <= 1000
      ? `numeric(${precision[1]},${precision[2] ?? '0'})`
      : 'numeric';
  }
  if (/^(float|float4|real)$/.test(base)) return 'real';
  if (/^(double|double precision|float8|float64)$/.test(base)) return 'double precision';
  if (/^(bool|boolean|logical)$/.test(base)) return 'boolean';
  if (base === 'date') return 'date';
  if (
    /^(timestamptz|timestamp with time zone|timestamp_tz|timestamp_ltz|timestamp with local time zone)$/.test(
      base,
    )
  )
    return 'timestamptz';
  if (/^(timestamp|datetime|timestamp_ntz|timestamp without time zone|datetime2|smalldatetime)$/.test(base))
    return 'timestamp';
  if (/^(time|time without time zone)$/.test(base)) return 'time';
  if (base === 'uuid') return 'uuid';
  if (/^(json|jsonb)$/.test(base)) return 'jsonb';
  return 'text';
}

async function size(path: string): Promise<number | undefined> {
  try {
    const info = await stat(path);
    return info.isFile() ? info.size : undefined;
  } catch {
    return undefined;
  }
}

async function readText(path: string, max: number, what: string): Promise<string> {
  const bytes = await size(path);
  if (bytes === undefined) throw new Error(`--dbt: ${path} is not a file`);
  if (bytes > max)
    throw new Error(
      `--dbt: ${path} is ${Math.round(bytes / 1048576)} MB, over the ${max / 1048576} MB read as a ${what}`,
    );
  const handle = await open(path, 'r');
  try {
    return await handle.readFile({ encoding: 'utf8' });
  } finally {
    await handle.close();
  }
}

async function readJson(path: string, what: string): Promise<unknown> {
  const text = await readText(path, MAX_MANIFEST_BYTES, what);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new Error(
      `--dbt: ${path} is not valid JSON (${(error as Error).message}); run dbt again to rewrite it`,
      { cause: error },
    );
  }
}

interface ProjectFiles {
  manifest: unknown;
  catalog?: unknown;
  /** Seed CSV texts by unique id (only when DIR is the project). */
  seedFiles: Map<string, string>;
}

async function readProject(dir: string): Promise<ProjectFiles> {
  const root = resolve(dir);
  for (const folder of [join(root, 'target'), root]) {
    const manifestPath = join(folder, 'manifest.json');
    if ((await size(manifestPath)) === undefined) continue;
    const manifest = await readJson(manifestPath, 'manifest');
    const catalogPath = join(folder, 'catalog.json');
    const catalog =
      (await size(catalogPath)) === undefined ? undefined : await readJson(catalogPath, 'catalog');
    const seedFiles = new Map<string, string>();
    const isProject = folder !== root || (await size(join(root, 'dbt_project.yml'))) !== undefined;
    const nodes = (
      manifest as { nodes?: Record<string, { resource_type?: unknown; original_file_path?: unknown }> }
    )?.nodes;
    if (isProject && typeof nodes === 'object' && nodes !== null) {
      for (const [id, node] of Object.entries(nodes)) {
        if (node?.resource_type !== 'seed' || typeof node.original_file_path !== 'string') continue;
        const path = resolve(root, node.original_file_path.replaceAll('\\', '/'));
        if (!isInsideFolder(root, path) || (await size(path)) === undefined) continue;
        seedFiles.set(id, await readText(path, MAX_SEED_BYTES, 'seed'));
      }
    }
    return { manifest, ...(catalog === undefined ? {} : { catalog }), seedFiles };
  }
  throw new Error(
    `--dbt ${dir}: no manifest.json in ${join(dir, 'target')} or ${dir}; run \`dbt compile\` (or \`dbt build\`) in the project first, and \`dbt docs generate\` for the catalog's column types`,
  );
}

/** Creates the project's relations in the main workspace's warehouse (see the head of this file). */
export async function createDbtWarehouse(db: Db, dir: string): Promise<DbtWarehouse> {
  const files = await readProject(dir);
  const dbtReader = await prepareDbtReader();
  const seeds: Record<string, string[]> = {};
  const rowsOf = new Map<string, string[][]>();
  for (const [id, text] of files.seedFiles) {
    const rows = parseCsv(text);
    const [header, ...body] = rows;
    if (!header) continue;
    seeds[id] = header.map((h) => h.trim());
    rowsOf.set(id, body);
  }
  const project = declareDbtProject(
    { manifest: files.manifest, ...(files.catalog === undefined ? {} : { catalog: files.catalog }), seeds },
    {},
    dbtReader,
  );
  const tables: DbtWarehouseTable[] = [];
  const warnings = [...project.warnings];
  await db.transaction(async (tx) => {
    const [workspace] = await tx.query<{ id: string }>(
      'SELECT id FROM gds.workspaces ORDER BY created_at, id LIMIT 1',
    );
    if (!workspace) throw new Error('--dbt: the database holds no workspace');
    const connectors = new Map<string, string>();
    for (const declaration of project.declarations) {
      const schema = declaration.source.schema;
      if (isReservedSchema(schema)) {
        // A dev connector onto gds (or the catalogs, or a certified view schema) would let members read it.
        warnings.push(
          `${declaration.uniqueId}: skipped, its schema ${schema} is reserved (gds, information_schema, pg_*, certified_*)`,
        );
        continue;
      }
      let connectorId = connectors.get(schema);
      if (connectorId === undefined) {
        connectorId = await connectorFor(tx, workspace.id, schema);
        connectors.set(schema, connectorId);
        await tx.exec(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`);
      }
      const source = `${schema}.${declaration.source.table}`;
      const base = {
        uniqueId: declaration.uniqueId,
        resourceType: declaration.resourceType,
        source,
        connectorId,
        columns: declaration.columns.length,
      };
      if (await describeWarehouseObject(tx, source)) {
        tables.push({ ...base, created: false });
        continue;
      }
      const target = `${quoteIdent(schema)}.${quoteIdent(declaration.source.table)}`;
      const rows = rowsOf.get(declaration.uniqueId);
      const header = seeds[declaration.uniqueId];
      const columns = declaration.columns.map((c) => {
        const position = header?.findIndex((h) => h.toLowerCase() === c.name.toLowerCase()) ?? -1;
        const type =
          c.type === 'unknown' && rows && position >= 0 ? inferredType(rows, position) : (c.type ?? 'text');
        return `${quoteIdent(c.name)} ${postgresTypeOf(type)}`;
      });
      await tx.exec(`CREATE TABLE ${target} (${columns.join(', ')})`);
      if (declaration.resourceType === 'seed' && rows && header) {
        const loaded = await loadSeed(tx, target, declaration, header, rows);
        if (typeof loaded === 'string') warnings.push(`${declaration.uniqueId}: ${loaded}`);
        tables.push({ ...base, created: true, rows: typeof loaded === 'number' ? loaded : 0 });
      } else tables.push({ ...base, created: true });
    }
    if (tables.some((t) => t.resourceType === 'seed' && (t.rows ?? 0) > 0))
      await fillModels(tx, files.manifest, project.declarations, tables, warnings);
  });
  return {
    dir: resolve(dir),
    ...(project.projectName === undefined ? {} : { projectName: project.projectName }),
    tables,
    refused: project.refusals.map((r) => ({ uniqueId: r.uniqueId, reason: r.reason })),
    warnings,
  };
}

/**
 * Fills each new model and snapshot table by running its compiled SQL over the tables made here (dbt's
 * relation names rewritten to them), parents first, once the seeds are loaded: a newcomer's gate run then
 * has rows to check. SQL PostgreSQL cannot run leaves its table empty, with a note.
 */
async function fillModels(
  tx: Queryable,
  manifest: unknown,
  declarations: DbtDeclaration[],
  tables: DbtWarehouseTable[],
  warnings: string[],
): Promise<void> {
  const grammar = await pgGrammar();
  const nodes = ((manifest as { nodes?: Record<string, Record<string, unknown>> }).nodes ?? {}) as Record<
    string,
    Record<string, unknown>
  >;
  const renames: Array<[string, string]> = [];
  for (const d of declarations) {
    const to = `${quoteIdent(d.source.schema)}.${quoteIdent(d.source.table)}`;
    const node = nodes[d.uniqueId] ?? {};
    if (typeof node['relation_name'] === 'string') renames.push([node['relation_name'], to]);
    if (typeof node['database'] === 'string')
      renames.push([`"${node['database']}"."${d.source.schema}"."${d.source.table}"`, to]);
    renames.push([`"${d.source.schema}"."${d.source.table}"`, to]);
  }
  renames.sort((a, b) => b[0].length - a[0].length);
  const byId = new Map(tables.map((t) => [t.uniqueId, t]));
  const declared = new Map(declarations.map((d) => [d.uniqueId, d]));
  const done = new Set<string>();
  const visit = async (id: string, path: Set<string>): Promise<void> => {
    if (done.has(id) || path.has(id)) return;
    path.add(id);
    const parents = nodes[id]?.['depends_on'] as { nodes?: unknown } | undefined;
    for (const parent of Array.isArray(parents?.nodes) ? (parents.nodes as string[]) : [])
      if (declared.has(parent)) await visit(parent, path);
    done.add(id);
    const table = byId.get(id);
    const declaration = declared.get(id);
    const code = nodes[id]?.['compiled_code'] ?? nodes[id]?.['compiled_sql'];
    if (!table?.created || table.resourceType === 'seed' || !declaration || typeof code !== 'string') return;
    let sql = code.trim().replace(/;\s*$/, '');
    for (const [from, to] of renames) sql = sql.replaceAll(from, to);
    const tree = oneQuery(grammar, sql);
    if (tree === undefined) {
      warnings.push(`${id}: left empty, its compiled SQL is not one query PostgreSQL reads`);
      return;
    }
    if (readsReserved(tree)) {
      warnings.push(
        `${id}: left empty, its compiled SQL reads a reserved schema (gds, information_schema, pg_*, certified_*) or calls a pg_ function`,
      );
      return;
    }
    const target = `${quoteIdent(declaration.source.schema)}.${quoteIdent(declaration.source.table)}`;
    const columns = declaration.columns.filter(
      (c) => !c.name.startsWith('dbt_') || table.resourceType !== 'snapshot',
    );
    const list = columns.map((c) => quoteIdent(c.name));
    try {
      await tx.exec('SAVEPOINT dbt_model');
      // Positionally, each value cast to its column's type (a seed read without types holds text).
      const casts = columns.map(
        (c) => `dbt_model.${quoteIdent(c.name)}::${postgresTypeOf(c.type ?? 'text')}`,
      );
      await tx.query(
        `INSERT INTO ${target} (${list.join(', ')}) SELECT ${casts.join(', ')} FROM (${sql}\n) AS dbt_model (${list.join(', ')})`,
      );
      await tx.exec('RELEASE SAVEPOINT dbt_model');
      const [count] = await tx.query<{ n: number }>(`SELECT count(*)::float8 AS n FROM ${target}`);
      table.rows = count?.n ?? 0;
    } catch (error) {
      await tx.exec('ROLLBACK TO SAVEPOINT dbt_model');
      const message = ((error as Error).message ?? String(error)).split('\n')[0] ?? '';
      warnings.push(`${id}: left empty, its compiled SQL does not run on PostgreSQL here (${message})`);
    }
  };
  for (const d of declarations) await visit(d.uniqueId, new Set());
}

/** A seed column's type from its values, as dbt infers it (integer, numeric, boolean, date, timestamp, text). */
export function inferredType(rows: string[][], position: number): string {
  const values = rows.map((r) => r[position] ?? '').filter((v) => v !== '');
  if (values.length === 0) return 'text';
  const all = (test: RegExp) => values.every((v) => test.test(v.trim()));
  if (all(/^-?\d{1,18}$/)) return 'bigint';
  if (all(/^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/)) return 'numeric';
  if (all(/^(true|false)$/i)) return 'boolean';
  if (all(/^\d{4}-\d{2}-\d{2}$/)) return 'date';
  if (all(/^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/)) return 'timestamp';
  return 'text';
}

/** Only a single SELECT is run (wrapped as a subquery it stays one statement): its parse tree, else undefined. */
function oneQuery(grammar: PgGrammar, sql: string): unknown {
  try {
    const tree = grammar.parseSync(sql) as { stmts?: Array<{ stmt?: Record<string, unknown> }> };
    return tree.stmts?.length === 1 && tree.stmts[0]?.stmt?.['SelectStmt'] !== undefined ? tree : undefined;
  } catch {
    return undefined;
  }
}

/** Schemas a --dbt project may neither declare nor read: the service's own, the catalogs, certified views. */
export function isReservedSchema(schema: string): boolean {
  const name = schema.toLowerCase();
  return (
    name === 'gds' || name === 'information_schema' || name.startsWith('pg_') || name.startsWith('certified_')
  );
}

/**
 * Whether a parse tree reads a reserved schema (a RangeVar's schemaname, or an unqualified pg_ relation,
 * which pg_catalog on the search path resolves) or calls a function named pg_… (pg_read_file and kin).
 */
function readsReserved(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(readsReserved);
  if (typeof node !== 'object' || node === null) return false;
  for (const [key, value] of Object.entries(node as Record<string, unknown>)) {
    if (key === 'RangeVar' && typeof value === 'object' && value !== null) {
      const { schemaname, relname } = value as { schemaname?: unknown; relname?: unknown };
      if (typeof schemaname === 'string' && isReservedSchema(schemaname)) return true;
      if (typeof relname === 'string' && relname.toLowerCase().startsWith('pg_')) return true;
    }
    if (key === 'FuncCall' && typeof value === 'object' && value !== null) {
      const names = (value as { funcname?: unknown }).funcname;
      const parts = Array.isArray(names)
        ? names.map((n) => (n as { String?: { sval?: unknown; str?: unknown } }).String)
        : [];
      if (
        parts.some((p) =>
          String(p?.sval ?? p?.str ?? '')
            .toLowerCase()
            .startsWith('pg_'),
        )
      )
        return true;
    }
    if (readsReserved(value)) return true;
  }
  return false;
}

/** The connector of the workspace that points at `schema`, else a new dev connector `dbt-<schema>`. */
async function connectorFor(tx: Queryable, workspaceId: string, schema: string): Promise<string> {
  const [held] = await tx.query<{ id: string }>(
    `SELECT id FROM gds.connectors WHERE workspace_id = $1 AND warehouse_schema = $2
      ORDER BY (environment_label = 'dev') DESC, created_at LIMIT 1`,
    [workspaceId, schema],
  );
  if (held) return held.id;
  const names = new Set(
    (
      await tx.query<{ name: string }>('SELECT name FROM gds.connectors WHERE workspace_id = $1', [
        workspaceId,
      ])
    ).map((r) => r.name),
  );
  let name = `dbt-${schema}`;
  for (let n = 2; names.has(name); n++) name = `dbt-${schema}-${n}`;
  const id = newId('con');
  await tx.query(
    `INSERT INTO gds.connectors (id, workspace_id, name, type, status, environment_label, warehouse_schema, created_at)
     VALUES ($1, $2, $3, 'postgres', 'ACTIVE', 'dev', $4, $5)`,
    [id, workspaceId, name, schema, new Date().toISOString()],
  );
  return id;
}

/** Inserts a seed's CSV rows (an empty field is NULL); the number of rows, or why they could not load. */
async function loadSeed(
  tx: Queryable,
  target: string,
  declaration: DbtDeclaration,
  header: string[],
  rows: string[][],
): Promise<number | string> {
  const names = declaration.columns.map((c) => c.name);
  const positions = header.map((h) => {
    const exact = names.indexOf(h);
    return exact >= 0 ? exact : names.findIndex((n) => n.toLowerCase() === h.toLowerCase());
  });
  const kept = positions.map((p, i) => ({ p, i })).filter(({ p }) => p >= 0);
  if (kept.length === 0) return 'its CSV header names none of the table columns; no row loaded';
  const list = kept.map(({ p }) => quoteIdent(names[p] ?? '')).join(', ');
  const batch = Math.max(1, Math.floor(30_000 / kept.length));
  try {
    await tx.exec('SAVEPOINT dbt_seed');
    for (let start = 0; start < rows.length; start += batch) {
      const chunk = rows.slice(start, start + batch);
      const values: unknown[] = [];
      const tuples = chunk.map((row) => {
        const placeholders = kept.map(({ i }) => {
          const value = row[i];
          values.push(value === undefined || value === '' ? null : value);
          return `$${values.length}`;
        });
        return `(${placeholders.join(', ')})`;
      });
      await tx.query(`INSERT INTO ${target} (${list}) VALUES ${tuples.join(', ')}`, values);
    }
    await tx.exec('RELEASE SAVEPOINT dbt_seed');
    return rows.length;
  } catch (error) {
    await tx.exec('ROLLBACK TO SAVEPOINT dbt_seed');
    return `its rows could not be loaded (${(error as Error).message}); the table is left empty`;
  }
}
