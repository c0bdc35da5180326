// What `status` and `quarantine open` show about a table: certification info from the contract versions,
// schema drift computed live against the warehouse object, and the table's DDL.
import type { Queryable } from '../db/handle.js';
import type { Column } from '../records/columns.js';
import { describeWarehouseObject, quoteIdent, quoteSource, splitSource } from '../warehouse.js';
import type { TableRow } from './tables.js';

export interface Certification {
  /** How many times the table reached CERTIFIED (its latest contract version number). */
  version: number;
  certifiedAt: string;
  certifiedBy: string | null;
  certifiedByEmail: string | null;
  kind: 'CERTIFICATION' | 'RESTORE';
  /** On a RESTORE, the version it restored. */
  restoredFrom: number | null;
}

/** The live contract version of the table (a certification, or a restore cut after one), or null. */
export async function latestCertification(q: Queryable, tableId: string): Promise<Certification | null> {
  const [row] = await q.query<{
    version: number;
    certified_at: Date | string;
    certified_by: string | null;
    email: string | null;
    kind: 'CERTIFICATION' | 'RESTORE';
    restored_from: number | null;
  }>(
    `SELECT v.version, v.certified_at, v.certified_by, u.email, v.kind, v.restored_from
       FROM gds.contract_versions v LEFT JOIN gds.users u ON u.id = v.certified_by
      WHERE v.table_id = $1 ORDER BY v.version DESC LIMIT 1`,
    [tableId],
  );
  return row
    ? {
        version: row.version,
        certifiedAt: new Date(row.certified_at).toISOString(),
        certifiedBy: row.certified_by,
        certifiedByEmail: row.email,
        kind: row.kind,
        restoredFrom: row.restored_from,
      }
    : null;
}

export interface SchemaDrift {
  /** False for a Mode B table: it has no warehouse object to compare with. */
  checked: boolean;
  drifted: boolean;
  /** The warehouse object no longer exists. */
  objectMissing: boolean;
  /** In the warehouse object, not registered. */
  added: string[];
  /** Registered, gone from the warehouse object. */
  removed: string[];
  typeChanged: Array<{ column: string; registered: string; warehouse: string }>;
}

export async function schemaDrift(q: Queryable, table: TableRow): Promise<SchemaDrift> {
  const none = { added: [], removed: [], typeChanged: [] };
  if (table.mode !== 'MODE_A' || !table.source)
    return { checked: false, drifted: false, objectMissing: false, ...none };
  const live = await describeWarehouseObject(q, table.source);
  if (!live) {
    return {
      checked: true,
      drifted: true,
      objectMissing: true,
      ...none,
      removed: table.columns.map((c) => c.name),
    };
  }
  const added = live.filter((c) => !table.columns.some((r) => r.name === c.name)).map((c) => c.name);
  const removed = table.columns.filter((r) => !live.some((c) => c.name === r.name)).map((r) => r.name);
  const typeChanged = table.columns.flatMap((r) => {
    const c = live.find((l) => l.name === r.name);
    return c && c.type !== r.type ? [{ column: r.name, registered: r.type, warehouse: c.type }] : [];
  });
  const drifted = added.length + removed.length + typeChanged.length > 0;
  return { checked: true, drifted, objectMissing: false, added, removed, typeChanged };
}

const SQL_TYPES: Record<Column['type'], string> = {
  text: 'text',
  integer: 'bigint',
  numeric: 'numeric',
  boolean: 'boolean',
  date: 'date',
  timestamp: 'timestamptz',
};

/**
 * The table's DDL: a view over its source for Mode A, the custody table's definition for Mode B. A SQL artifact
 * declares its source by the view's schema-qualified name and a column's type by a cast, so the view is named
 * `schema.table` of its source and selects each column as the definition declared it (`"x"::integer AS "x"`
 * where a type was declared): `gds push <file> --replace <id>` then takes the file back as the same
 * definition. What SQL cannot say (a required column, a reference, bounds; a table named otherwise than its
 * source object) is named in a comment, with the way to keep it.
 */
export function tableDdl(table: TableRow): string {
  const name = quoteIdent(table.name);
  if (table.mode === 'MODE_A' && table.source) {
    const [schema, object] = splitSource(table.source);
    const declared: ReadonlyArray<{ name: string; type?: string | undefined }> =
      table.artifact?.columns ?? table.columns;
    const select = declared
      .map((c) => `  ${quoteIdent(c.name)}${c.type ? `::${c.type} AS ${quoteIdent(c.name)}` : ''}`)
      .join(',\n');
    const from = quoteSource(table.source);
    const notes: string[] = [];
    const unsaid = (table.artifact?.columns ?? [])
      .filter(
        (c) =>
          c.required === true || c.references !== undefined || c.min !== undefined || c.max !== undefined,
      )
      .map((c) => c.name);
    if (unsaid.length > 0)
      notes.push(
        `-- Declared beyond SQL (required, references, min/max) for ${unsaid.join(', ')}: a YAML or JSON definition keeps them.\n`,
      );
    if (object !== table.name)
      notes.push(`-- The source is ${table.source}: push this file with --source ${table.source}.\n`);
    const view = object === table.name ? `${quoteIdent(schema)}.${name}` : name;
    return `${notes.join('')}CREATE OR REPLACE VIEW ${view} AS\nSELECT\n${select}\nFROM ${from};\n`;
  }
  const columns = table.columns
    .map((c) => `  ${quoteIdent(c.name)} ${SQL_TYPES[c.type]}${c.required ? ' NOT NULL' : ''}`)
    .join(',\n');
  return `CREATE TABLE ${name} (\n  "id" text PRIMARY KEY,\n${columns}\n);\n`;
}
