// The live semantic contract of a table (§2.6) and its immutable numbered versions (§9): one version
// per certification, and a restore cuts a new forward version carrying an earlier one's fields.
import type { Clock } from '../clock.js';
import { isoOf, isoOrNull } from '../db/timestamps.js';
import type { Queryable } from '../db/handle.js';
import { copiedRows } from '../db/handle.js';
import { notFound } from '../errors.js';
import { newId } from '../ids.js';

export const INTENTS = ['METRIC', 'DECISION', 'OPERATIONAL', 'EXPLORATORY'] as const;
export type Intent = (typeof INTENTS)[number];
export const CONSUMER_CLASSES = ['HUMAN', 'AI', 'AUTOMATION', 'EXTERNAL'] as const;
export type ConsumerClass = (typeof CONSUMER_CLASSES)[number];

/** The fields a version snapshot carries and a restore puts back. */
export interface ContractFields {
  intent: Intent | null;
  allowedConsumers: ConsumerClass[];
  grain: string;
  grainType: string | null;
  grainKeyColumns: string[];
  meaning: string;
}

export interface LiveContract extends ContractFields {
  id: string;
  tableId: string;
  certifiedAt: string | null;
  updatedAt: string;
  /** Bumped by every write of the live contract (0: created, never written): what `If-Match` names. */
  revision: number;
}

export interface ContractVersion {
  version: number;
  kind: 'CERTIFICATION' | 'RESTORE';
  environmentLabel: string;
  certifiedAt: string;
  certifiedBy: string;
  grain: string;
  contract: ContractFields;
  restoredFrom: number | null;
  reason: string | null;
}

interface ContractRow {
  id: string;
  table_id: string;
  intent: Intent | null;
  allowed_consumers: ConsumerClass[];
  grain: string;
  grain_type: string | null;
  grain_key_columns: string[];
  meaning: string;
  certified_at: Date | null;
  updated_at: Date;
  revision: number;
}

function toContract(row: ContractRow): LiveContract {
  return {
    id: row.id,
    tableId: row.table_id,
    intent: row.intent,
    allowedConsumers: row.allowed_consumers,
    grain: row.grain,
    grainType: row.grain_type,
    grainKeyColumns: row.grain_key_columns,
    meaning: row.meaning,
    certifiedAt: isoOrNull(row.certified_at),
    updatedAt: isoOf(row.updated_at),
    revision: Number(row.revision),
  };
}

export function fieldsOf(contract: ContractFields): ContractFields {
  return {
    intent: contract.intent,
    allowedConsumers: [...contract.allowedConsumers],
    grain: contract.grain,
    grainType: contract.grainType,
    grainKeyColumns: [...contract.grainKeyColumns],
    meaning: contract.meaning,
  };
}

/** The live contracts of several tables at once, by table id (a table without one is absent). */
export async function findContracts(q: Queryable, tableIds: string[]): Promise<Map<string, LiveContract>> {
  if (tableIds.length === 0) return new Map();
  const rows = await copiedRows<ContractRow>(
    q,
    'SELECT * FROM gds.contracts WHERE table_id = ANY($1)',
    'table_id',
    [tableIds],
    {
      id: 'text',
      table_id: 'text',
      intent: 'text',
      allowed_consumers: 'jsonb',
      grain: 'text',
      grain_type: 'text',
      grain_key_columns: 'jsonb',
      meaning: 'text',
      certified_at: 'timestamptz',
      updated_at: 'timestamptz',
      revision: 'int4',
    },
  );
  return new Map(rows.map((row) => [row.table_id, toContract(row)]));
}

/** The table's live contract, or null while it has none (never certified, no intent set). */
export async function findContract(q: Queryable, tableId: string): Promise<LiveContract | null> {
  const [row] = await q.query<ContractRow>('SELECT * FROM gds.contracts WHERE table_id = $1', [tableId]);
  return row ? toContract(row) : null;
}

/**
 * The table's live contract, created the first time it is needed with the grain the definition
 * declared (if any) and no intent.
 */
export async function liveContract(
  q: Queryable,
  clock: Clock,
  table: { id: string; grain: string | null; grainKeyColumns: string[] | null },
): Promise<LiveContract> {
  await q.query(
    `INSERT INTO gds.contracts (table_id, id, grain, grain_key_columns, updated_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (table_id) DO NOTHING`,
    [
      table.id,
      newId('ctr'),
      table.grain ?? '',
      JSON.stringify(table.grainKeyColumns ?? []),
      isoOf(new Date(clock())),
    ],
  );
  const [row] = await q.query<ContractRow>('SELECT * FROM gds.contracts WHERE table_id = $1 FOR UPDATE', [
    table.id,
  ]);
  if (!row) throw new Error(`contract of ${table.id} vanished`);
  return toContract(row);
}

/**
 * Whether two contracts hold the same fields. The allowed consumer classes are a subset (§2.6), compared as a
 * set: a reorder is no change. The grain key columns are an array (§2.6), compared in order.
 */
export const sameFields = (a: ContractFields, b: ContractFields): boolean =>
  JSON.stringify(comparable(a)) === JSON.stringify(comparable(b));

const comparable = (contract: ContractFields): ContractFields => ({
  ...fieldsOf(contract),
  allowedConsumers: [...new Set(contract.allowedConsumers)].sort(),
});

/** A move of a table's contract revision (gds.tables.contract_version), for the audit entry of the write. */
export interface ContractVersionMove {
  from: number;
  to: number;
}

/** What a contract write left: the live contract, and the revision move when its fields changed. */
export interface ContractWrite {
  contract: LiveContract;
  contractVersion?: ContractVersionMove;
}

/**
 * Replaces the live contract's fields (callers merge what carries forward), and mirrors the grain on
 * the table, where Gate 1's grain-uniqueness predicate reads its key columns. A change of the fields bumps
 * the table's contract_version, which makes a review proof taken before it stale; a write of the same fields
 * (certify stamping certifiedAt) does not. Two writes in parallel compare in turn: each bumps when it changes
 * what the other wrote.
 */
export async function updateContract(
  q: Queryable,
  clock: Clock,
  tableId: string,
  fields: ContractFields,
  actor: string,
  certifiedAt?: string,
): Promise<ContractWrite> {
  // The row lock before the comparison (a caller's lock on the table row or from liveContract is held already,
  // but not every caller takes one): a parallel write is compared against once it committed, not before.
  const [before] = await q.query<ContractRow>('SELECT * FROM gds.contracts WHERE table_id = $1 FOR UPDATE', [
    tableId,
  ]);
  const changed = before === undefined || !sameFields(toContract(before), fields);
  const [row] = await q.query<ContractRow>(
    `UPDATE gds.contracts SET intent = $2, allowed_consumers = $3, grain = $4, grain_type = $5,
            grain_key_columns = $6, meaning = $7, updated_at = $8, updated_by = $9,
            certified_at = COALESCE($10, certified_at), revision = revision + 1
      WHERE table_id = $1 RETURNING *`,
    [
      tableId,
      fields.intent,
      JSON.stringify(fields.allowedConsumers),
      fields.grain,
      fields.grainType,
      JSON.stringify(fields.grainKeyColumns),
      fields.meaning,
      isoOf(new Date(clock())),
      actor,
      certifiedAt ?? null,
    ],
  );
  if (!row) throw new Error(`no contract for ${tableId}`);
  const [table] = await q.query<{ contract_version: number }>(
    `UPDATE gds.tables SET grain = $2, grain_key_columns = $3,
            contract_version = contract_version + CASE WHEN $4::boolean THEN 1 ELSE 0 END
      WHERE id = $1 RETURNING contract_version`,
    [tableId, fields.grain, JSON.stringify(fields.grainKeyColumns), changed],
  );
  const to = Number(table?.contract_version ?? 0);
  return { contract: toContract(row), ...(changed ? { contractVersion: { from: to - 1, to } } : {}) };
}

interface VersionRow {
  version: number;
  kind: 'CERTIFICATION' | 'RESTORE';
  environment_label: string;
  contract: ContractFields;
  certified_at: Date;
  certified_by: string;
  /** Present where the query joins the users (the version list). */
  certified_by_email?: string | null;
  restored_from: number | null;
  reason: string | null;
}

function toVersion(row: VersionRow): ContractVersion {
  return {
    version: row.version,
    kind: row.kind,
    environmentLabel: row.environment_label,
    certifiedAt: isoOf(row.certified_at),
    certifiedBy: row.certified_by,
    ...(row.certified_by_email === undefined ? {} : { certifiedByEmail: row.certified_by_email }),
    grain: row.contract.grain,
    contract: row.contract,
    restoredFrom: row.restored_from,
    reason: row.reason,
  };
}

export async function listVersions(q: Queryable, tableId: string): Promise<ContractVersion[]> {
  const rows = await q.query<VersionRow>(
    `SELECT v.*, (SELECT email FROM gds.users u WHERE u.id = v.certified_by) AS certified_by_email
       FROM gds.contract_versions v WHERE v.table_id = $1 ORDER BY v.version`,
    [tableId],
  );
  return rows.map(toVersion);
}

export async function getVersion(q: Queryable, tableId: string, version: number): Promise<ContractVersion> {
  const [row] = await q.query<VersionRow>(
    'SELECT * FROM gds.contract_versions WHERE table_id = $1 AND version = $2',
    [tableId, version],
  );
  if (!row) {
    throw notFound(
      'version_not_found',
      `Table ${tableId} has no contract version ${version}; see versions list.`,
      {
        tableId,
        version,
      },
    );
  }
  return toVersion(row);
}

/** Appends the next numbered version (never rewrites one: the table refuses UPDATE and DELETE). */
export async function appendVersion(
  q: Queryable,
  input: {
    tableId: string;
    kind: ContractVersion['kind'];
    environmentLabel: string;
    contract: ContractFields;
    at: string;
    by: string;
    restoredFrom?: number;
    reason?: string;
  },
): Promise<ContractVersion> {
  const [row] = await q.query<VersionRow>(
    `INSERT INTO gds.contract_versions
       (table_id, version, kind, environment_label, contract, certified_at, certified_by, restored_from, reason)
     SELECT $1, COALESCE(max(version), 0) + 1, $2, $3, $4, $5, $6, $7, $8
       FROM gds.contract_versions WHERE table_id = $1
     RETURNING *, (SELECT u.email FROM gds.users u WHERE u.id = certified_by) AS certified_by_email`,
    [
      input.tableId,
      input.kind,
      input.environmentLabel,
      JSON.stringify(fieldsOf(input.contract)),
      input.at,
      input.by,
      input.restoredFrom ?? null,
      input.reason ?? null,
    ],
  );
  if (!row) throw new Error('version insert returned nothing');
  return toVersion(row);
}
