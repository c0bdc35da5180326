// The pipeline recertification signal (spec §4.8): reads the batch of rebuilt tables from `tables` or from
// dbt run results (schema v1-v6, read as dbt means them by core/dbt-run, optionally resolved through a manifest), resolves the environment, and
// applies `recertify_signal` to each governed table it names. Names matching no governed table are a
// silent `not_governed`.
import type { ManifestNode } from '../../core/dbt-run.js';
import {
  namedTables,
  readRunResults,
  reduceManifest,
  resultCounts,
  storableNodes,
} from '../../core/dbt-run.js';
import { ANY_ENVIRONMENT } from '../../core/scopes.js';
import { longerThan, MAX_SIGNAL_NAME_CHARS, MAX_TRIGGER_CHARS } from '../../core/text-bounds.js';
import type { IntegrationCaller } from '../auth/caller.js';
import type { AppContext } from '../context.js';
import type { CertifiedViewStatus } from '../certification/view.js';
import { repairCertifiedViews } from '../certification/view.js';
import type { Queryable } from '../db/handle.js';
import { badRequest, forbidden, HttpError } from '../errors.js';
import { applyOnce, requestHash } from '../idempotency.js';
import { checkNesting, nestedTooDeep } from '../input-rule.js';
import type { AuditInput } from '../audit.js';
import { recordAudits } from '../audit.js';
import type { RecertificationRequestInput } from './engine.js';
import { applyTrigger, fileRecertificationRequests, governedTransaction } from './engine.js';
import type { TableRow } from './tables.js';
import { TABLE_COLUMNS, toTableRow } from './tables.js';

export const MAX_TABLES = 500;
/** `evidence` is a cheap-tier summary stamped on audit events (§4.8): at most 64 KB serialized. */
export const MAX_EVIDENCE_BYTES = 64 * 1024;

/** One rebuilt table as submitted: its name, and what identifies its definition when known. */
export interface BatchEntry {
  name: string;
  schema?: string;
  /** A definition hash (`tables[].definitionHash`) or the manifest node's checksum. */
  definitionHash?: string;
}

export interface RecertifyResponse {
  environmentLabel: string;
  submitted: number;
  governed: number;
  outcomes: Array<{
    table: string;
    outcome: string;
    driftDetected: boolean;
    /** A PENDING_REVIEW table whose data the signal moved past its submission's proof (stale until resubmitted). */
    staleSubmission?: true;
    /** A CERTIFIED table's view after the signal (published again when it was missing). */
    certifiedView?: CertifiedViewStatus;
    /** A bare name two tables' relations answer to (`schema.name` each): neither was signalled. */
    ambiguous?: string[];
  }>;
}

type Body = Record<string, unknown>;

const isObject = (value: unknown): value is Body =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const WRAPPED_FIELDS = ['tables', 'runResults', 'manifest', 'environmentLabel', 'trigger', 'evidence'];

interface Signal {
  batch: BatchEntry[];
  raw: boolean;
  environmentLabel?: string;
  trigger: string;
  evidence?: Body;
  /** Run-results summary stamped on the audit event (invocation id, dbt version). */
  run?: Record<string, unknown>;
}

/** Reads the body into a batch; 400 for every malformed shape §7.2 lists. */
export function readSignal(body: unknown): Signal {
  if (!isObject(body)) throw badRequest('invalid_request', 'Send a JSON object with tables or runResults.');
  const hasTables = 'tables' in body;
  const hasRun = 'runResults' in body;
  const raw = !hasTables && !hasRun && isObject(body['metadata']) && Array.isArray(body['results']);
  if (raw) {
    // dbt writes no environmentLabel into run_results.json, but one added at its top counts as in a wrapped body.
    const environmentLabel = readEnvironmentLabel(body);
    return {
      ...fromRunResults(body, undefined),
      raw: true,
      trigger: 'PIPELINE_RUN',
      ...(environmentLabel === undefined ? {} : { environmentLabel }),
    };
  }
  if (hasTables === hasRun) {
    throw badRequest(
      'invalid_request',
      hasTables
        ? 'Send exactly one of tables or runResults, not both.'
        : 'Send exactly one of tables (names of rebuilt tables) or runResults (a dbt run_results.json).',
    );
  }
  const unknown = Object.keys(body).filter((k) => !WRAPPED_FIELDS.includes(k));
  if (unknown.length > 0) {
    throw badRequest(
      'invalid_request',
      `Unknown fields: ${unknown.join(', ')}. Allowed: ${WRAPPED_FIELDS.join(', ')}.`,
      {
        unknown,
      },
    );
  }
  const environmentLabel = readEnvironmentLabel(body);
  const trigger = body['trigger'] ?? 'PIPELINE_RUN';
  if (typeof trigger !== 'string' || trigger === '' || longerThan(trigger, MAX_TRIGGER_CHARS)) {
    throw badRequest(
      'invalid_request',
      `trigger must be a non-empty string of at most ${MAX_TRIGGER_CHARS} characters.`,
      {
        field: 'trigger',
      },
    );
  }
  const evidence = body['evidence'];
  if (evidence !== undefined && !isObject(evidence)) {
    throw badRequest('invalid_request', 'evidence must be an object (kind, runId, summary).', {
      field: 'evidence',
    });
  }
  if (evidence !== undefined) checkEvidenceSize(evidence);
  const read = hasTables
    ? { batch: fromTables(body['tables']) }
    : fromRunResults(body['runResults'], body['manifest']);
  return {
    ...read,
    raw: false,
    trigger,
    ...(environmentLabel === undefined ? {} : { environmentLabel }),
    ...(evidence === undefined ? {} : { evidence }),
  };
}

/** The body's `environmentLabel`, when it names one; 400 when it is not a non-empty string. */
function readEnvironmentLabel(body: Body): string | undefined {
  const environmentLabel = body['environmentLabel'];
  if (environmentLabel !== undefined && (typeof environmentLabel !== 'string' || environmentLabel === '')) {
    throw badRequest('invalid_request', 'environmentLabel must be a non-empty string.', {
      field: 'environmentLabel',
    });
  }
  return environmentLabel;
}

/** 413 when `evidence` serializes to more than MAX_EVIDENCE_BYTES: it is a summary, not the run's output. */
function checkEvidenceSize(evidence: Body): void {
  const bytes = Buffer.byteLength(JSON.stringify(evidence), 'utf8');
  if (bytes <= MAX_EVIDENCE_BYTES) return;
  throw new HttpError(
    413,
    'evidence_too_large',
    `evidence is ${bytes} bytes serialized; the limit is 64 KB (${MAX_EVIDENCE_BYTES} bytes). Send a summary ` +
      '(kind, runId, counts) and keep the full output in your pipeline.',
    { field: 'evidence', limitBytes: MAX_EVIDENCE_BYTES, bytes },
  );
}

function fromTables(tables: unknown): BatchEntry[] {
  if (!Array.isArray(tables) || tables.length === 0) {
    throw badRequest(
      'invalid_tables',
      `tables must be an array of 1-${MAX_TABLES} table names or {name, schema?, definitionHash?} objects.`,
      {
        field: 'tables',
      },
    );
  }
  if (tables.length > MAX_TABLES) throw tooMany(tables.length);
  return tables.map((entry, index) => {
    if (typeof entry === 'string' && longerThan(entry, MAX_SIGNAL_NAME_CHARS)) throw tooLong(index);
    if (typeof entry === 'string' && entry.trim() !== '') return { name: entry.trim() };
    const invalid = () =>
      badRequest('invalid_tables', `tables[${index}] must be a table name or an object with a string name.`, {
        field: `tables[${index}]`,
      });
    if (!isObject(entry) || typeof entry['name'] !== 'string' || entry['name'].trim() === '') throw invalid();
    const { schema, definitionHash } = entry;
    if (
      (schema !== undefined && typeof schema !== 'string') ||
      (definitionHash !== undefined && typeof definitionHash !== 'string')
    ) {
      throw invalid();
    }
    if ([entry['name'], schema ?? '', definitionHash ?? ''].some((s) => longerThan(s, MAX_SIGNAL_NAME_CHARS)))
      throw tooLong(index);
    return {
      name: entry['name'].trim(),
      ...(schema?.trim() ? { schema: schema.trim() } : {}),
      ...(definitionHash ? { definitionHash } : {}),
    };
  });
}

const tooLong = (index: number) =>
  badRequest(
    'invalid_tables',
    `tables[${index}] is over ${MAX_SIGNAL_NAME_CHARS} characters; send table names.`,
    {
      field: `tables[${index}]`,
    },
  );

const tooMany = (count: number) =>
  badRequest(
    'too_many_tables',
    `A signal names at most ${MAX_TABLES} tables; this one names ${count}. Split the batch.`,
    {
      count,
      max: MAX_TABLES,
    },
  );

/**
 * The manifest's nodes when it looks like a dbt manifest; anything else is ignored (never an error), as is a
 * node naming a model in text the database cannot hold (a NUL, a lone surrogate): §4.8's bad manifest. The
 * others still name their tables (an alias).
 */
function manifestNodes(manifest: unknown): Record<string, ManifestNode> | null {
  const nodes = reduceManifest(manifest)?.nodes;
  return nodes === undefined ? null : storableNodes(nodes).kept;
}

function fromRunResults(
  runResults: unknown,
  manifest: unknown,
): { batch: BatchEntry[]; run: Record<string, unknown> } {
  const reading = readRunResults(runResults);
  if (!reading.ok) throw badRequest(reading.code, reading.message);
  const nodes = manifestNodes(manifest);
  const naming = namedTables(reading.built, nodes);
  if (!naming.ok) throw badRequest(naming.code, naming.message);
  // One entry per relation: two models of one alias in two schemas are two relations (each its table).
  const seen = new Map<string, BatchEntry>();
  for (const entry of naming.tables) {
    const key = `${entry.schema ?? ''}.${entry.name}`.toLowerCase();
    if (!seen.has(key)) seen.set(key, entry);
  }
  if (seen.size > MAX_TABLES) throw tooMany(seen.size);
  return {
    batch: [...seen.values()],
    run: {
      schemaVersion: reading.version,
      command: reading.command,
      invocationId: reading.invocationId,
      dbtVersion: reading.dbtVersion,
      manifestUsed: nodes !== null,
      // The evidence summary derived from the run (§4.8): each resource type's results by status, tests
      // included, for whoever reads the audit entry. Context only: certification is verified on its own.
      results: resultCounts(runResults),
    },
  };
}

/** The environment the signal acts in (§4.8 "Environment resolution"), with its 400 and 403 cases. */
/** §4.8: a body `environmentLabel` must match an environment-scoped token's environment (403). */
function checkTokenEnvironment(caller: IntegrationCaller, environmentLabel: string): void {
  if (caller.env === ANY_ENVIRONMENT || environmentLabel === caller.env) return;
  throw forbidden(
    'environment_mismatch',
    `This token is scoped to environment ${caller.env}; the body names ${environmentLabel}.`,
    { tokenEnv: caller.env, environmentLabel },
  );
}

async function resolveEnvironment(
  ctx: AppContext,
  caller: IntegrationCaller,
  signal: Signal,
): Promise<string> {
  let label: string;
  if (caller.env !== '*') {
    if (signal.environmentLabel !== undefined) checkTokenEnvironment(caller, signal.environmentLabel);
    label = caller.env;
  } else if (signal.raw && signal.environmentLabel === undefined) {
    throw badRequest(
      'environment_required',
      'This raw run-results body names no environment: send it with an environment-scoped token, or add "environmentLabel" at its top (or wrap it as {"runResults": …, "environmentLabel": …}).',
      { field: 'environmentLabel' },
    );
  } else if (signal.environmentLabel === undefined) {
    throw badRequest(
      'environment_required',
      'environmentLabel is required with an environment-agnostic token.',
      {
        field: 'environmentLabel',
      },
    );
  } else {
    label = signal.environmentLabel;
  }
  const [tier] = await ctx.db.query(
    'SELECT 1 FROM gds.connectors WHERE workspace_id = $1 AND environment_label = $2 LIMIT 1',
    [caller.workspaceId, label],
  );
  if (!tier) {
    throw badRequest(
      'unknown_environment',
      `Environment ${label} is not configured in this workspace (no connector serves it).`,
      {
        environmentLabel: label,
      },
    );
  }
  return label;
}

/** What an entry of the batch names: its table, or (a bare name two tables' relations answer to) none. */
interface Match {
  table?: TableRow;
  /** The relations (`schema.name`) of the tables a bare name could mean: none is signalled. */
  ambiguous?: string[];
}

/**
 * The table each entry names. An entry naming its schema (a rebuilt relation of a run, a `tables` entry with
 * `schema`) names only a table in that schema: of a run, the table over that relation (its source is the
 * entry's schema.name), never a table of that name in another schema (another team's); of `tables`
 * (`byExplicitSchema`), that table, else the table of that name over a relation in that schema. A bare name
 * names the table of that name, else the table over a relation of that name in any schema; when two tables
 * are (two schemas' relations of the name), it is ambiguous and names neither. Looked up by key: the cost
 * grows with the tables and the entries, never their product.
 */
function matchTables(tables: TableRow[], batch: BatchEntry[], byExplicitSchema: boolean): Match[] {
  const bySource = new Map<string, TableRow>();
  const byName = new Map<string, TableRow>();
  const byObject = new Map<string, TableRow[]>();
  const first = (map: Map<string, TableRow>, key: string, table: TableRow) => {
    if (!map.has(key)) map.set(key, table);
  };
  for (const t of tables) {
    const [schema = '', object = ''] = t.source ? t.source.toLowerCase().split('.') : [];
    const name = t.name.toLowerCase();
    first(bySource, `${schema}\0${object}`, t);
    // Keyed once for any schema and once for the table's own (the explicit-schema lookups).
    first(byName, `\0${name}`, t);
    first(byName, `${schema}\0${name}`, t);
    if (object === '') continue;
    const over = byObject.get(object);
    if (over) over.push(t);
    else byObject.set(object, [t]);
  }
  return batch.map((entry): Match => {
    const name = entry.name.toLowerCase();
    const schema = entry.schema?.toLowerCase();
    if (schema !== undefined) {
      const table =
        bySource.get(`${schema}\0${name}`) ??
        (byExplicitSchema ? byName.get(`${schema}\0${name}`) : undefined);
      return table ? { table } : {};
    }
    const named = byName.get(`\0${name}`);
    if (named) return { table: named };
    const over = byObject.get(name) ?? [];
    if (over.length <= 1) return over[0] ? { table: over[0] } : {};
    return { ambiguous: over.map((t) => t.source ?? t.name).sort() };
  });
}

/**
 * The Mode A tables of the environment that an entry of the batch may name (by table name or by the object
 * of its source, case-insensitively): one lookup through the name indexes, whatever the workspace's size,
 * in the order matchTable picks the first match from (oldest first).
 */
async function candidateTables(
  tx: Queryable,
  workspaceId: string,
  environmentLabel: string,
  batch: BatchEntry[],
): Promise<TableRow[]> {
  const names = [...new Set(batch.map((entry) => entry.name.toLowerCase()))];
  const rows = await tx.query<Parameters<typeof toTableRow>[0]>(
    `SELECT ${TABLE_COLUMNS} FROM gds.tables
      WHERE workspace_id = $1 AND active AND mode = 'MODE_A' AND environment_label = $2
        AND (lower(name) = ANY($3::text[]) OR lower(split_part(source, '.', 2)) = ANY($3::text[]))
      ORDER BY created_at, name`,
    [workspaceId, environmentLabel, names],
  );
  return rows.map(toTableRow);
}

/**
 * The batch's matches, each matched table locked before its state is read: a certify, reject, submission or
 * replacement committing meanwhile is read here, not decided on before it. Only the matched tables are locked
 * (in id order, as every writer of several tables locks them), not every table of a name a batch's entry
 * has: another team's crm.orders waits for no signal of analytics.orders. A table that matches only once
 * others are locked (a replacement moved a source meanwhile) may sort before them: the locks taken are given
 * back (to a savepoint) and all of them taken again in id order, so that two signals never wait on each other
 * in a cycle (PostgreSQL's 40P01, a 503 the client would have to send again).
 */
async function lockedMatches(
  tx: Queryable,
  workspaceId: string,
  environmentLabel: string,
  batch: BatchEntry[],
  byExplicitSchema: boolean,
): Promise<Match[]> {
  const locked = new Set<string>();
  for (let round = 0; ; round++) {
    const found = matchTables(
      await candidateTables(tx, workspaceId, environmentLabel, batch),
      batch,
      byExplicitSchema,
    );
    const matched = found.flatMap((m) => (m.table ? [m.table.id] : []));
    if (matched.every((id) => locked.has(id))) {
      if (round > 0) await tx.query('RELEASE SAVEPOINT recertify_locks');
      return found;
    }
    await tx.query(round === 0 ? 'SAVEPOINT recertify_locks' : 'ROLLBACK TO SAVEPOINT recertify_locks');
    for (const id of matched) locked.add(id);
    await tx.query(`SELECT id FROM gds.tables WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE`, [
      [...locked],
    ]);
  }
}

/**
 * The signal of `body`, applied once per idempotency key: a signal sent again with its key (a retry after a
 * lost answer, a CI job run again) gets the first answer and `replayed: true`, and nothing is applied twice.
 * The key is claimed in the signal's own transaction, so a signal that failed or was cut off left no key, and
 * two at once with one key wait for each other. The same key with another body is 422.
 */
export async function recertify(
  ctx: AppContext,
  caller: IntegrationCaller,
  body: unknown,
  idempotencyKey?: string,
): Promise<{ response: RecertifyResponse; replayed: boolean }> {
  // §4.8: a bad manifest is ignored and never fails the call; one nested too deep to walk is left out.
  if (
    typeof body === 'object' &&
    body !== null &&
    nestedTooDeep((body as Record<string, unknown>)['manifest'])
  )
    body = { ...body, manifest: undefined };
  // Run results and evidence are free-form: only their depth is bounded before they are walked.
  checkNesting(body, 'body');
  // A body naming an environment the token is not scoped to is refused (403) before the rest is read.
  const named = isObject(body) ? body['environmentLabel'] : undefined;
  if (typeof named === 'string') checkTokenEnvironment(caller, named);
  const signal = readSignal(body);
  const environmentLabel = await resolveEnvironment(ctx, caller, signal);
  const explicit = !signal.run;
  return governedTransaction(ctx.db, ctx.clock, async (tx) => {
    if (idempotencyKey === undefined) return { response: await applySignal(tx), replayed: false };
    const keyed = {
      table: 'gds.recertify_signals',
      workspaceId: caller.workspaceId,
      key: idempotencyKey,
      hash: requestHash([environmentLabel, body]),
      what: 'signal',
    } as const;
    return applyOnce(tx, keyed, ctx.clock(), () => applySignal(tx));
  });

  async function applySignal(tx: Queryable): Promise<RecertifyResponse> {
    const found = await lockedMatches(tx, caller.workspaceId, environmentLabel, signal.batch, explicit);
    const matched = signal.batch.map((entry, i) => ({ entry, ...found[i] }));
    // A table named twice in one batch is signalled once, for its first entry; every entry naming it
    // reports that outcome. Tables are signalled (and so their rows locked) in table-id order, whatever
    // the batch's order: two signals naming the same tables in opposite orders never deadlock.
    const first = new Map<string, { entry: BatchEntry; table: TableRow }>();
    for (const { entry, table } of matched)
      if (table && !first.has(table.id)) first.set(table.id, { entry, table });
    const signalled = await signalTables(
      ctx,
      tx,
      caller,
      signal,
      [...first.keys()].sort().map((id) => first.get(id) as { entry: BatchEntry; table: TableRow }),
      environmentLabel,
    );
    // A rebuild (dbt's rename and drop … cascade) may have dropped the certified views: published again,
    // all of the signal's at once.
    const certified = [...first.values()].flatMap(({ table }) =>
      table.state === 'CERTIFIED' && signalled.get(table.id)?.outcome !== 'not_governed' ? [table] : [],
    );
    const views = await repairCertifiedViews(tx, certified, {
      clock: ctx.clock,
      userId: caller.userId,
      via: 'recertify',
    });
    for (const [id, certifiedView] of views) {
      const outcome = signalled.get(id);
      if (outcome) signalled.set(id, { ...outcome, certifiedView });
    }
    const outcomes: RecertifyResponse['outcomes'] = matched.map(({ entry, table, ambiguous }) => {
      const outcome = table && signalled.get(table.id);
      // The relation's schema, when the entry named one: two relations of one name are told apart.
      const named = { table: entry.name, ...(entry.schema ? { schema: entry.schema } : {}) };
      return outcome
        ? { ...outcome, ...named }
        : {
            ...named,
            outcome: 'not_governed',
            driftDetected: false,
            ...(ambiguous ? { ambiguous } : {}),
          };
    });
    return {
      environmentLabel,
      submitted: signal.batch.length,
      governed: outcomes.filter((o) => o.outcome !== 'not_governed').length,
      outcomes,
    };
  }
}

/**
 * Applies `recertify_signal` to each table, in the order given, and carries out the effects: the transitions
 * one by one (each is a pure decision), their writes (ingests, requests, audit entries) a statement each for
 * the whole batch. The outcome of each, by table id.
 */
async function signalTables(
  ctx: AppContext,
  tx: Queryable,
  caller: IntegrationCaller,
  signal: Signal,
  signals: ReadonlyArray<{ entry: BatchEntry; table: TableRow }>,
  environmentLabel: string,
): Promise<Map<string, RecertifyResponse['outcomes'][number]>> {
  const audits: AuditInput[] = [];
  const ingests: Array<{ id: string; hash: string | null }> = [];
  const requests: Array<Omit<RecertificationRequestInput, 'clock'>> = [];
  const outcomes = new Map<string, RecertifyResponse['outcomes'][number]>();
  for (const { entry, table } of signals) {
    const driftDetected =
      entry.definitionHash !== undefined &&
      table.definitionChecksum !== null &&
      table.definitionChecksum !== entry.definitionHash;
    const result = await applyTrigger(tx, {
      table,
      trigger: 'recertify_signal',
      context: { mode: table.mode, driftDetected },
      actor: caller,
      clock: ctx.clock,
      audits,
      details: {
        trigger: signal.trigger,
        environmentLabel,
        submittedAs: entry.name,
        driftDetected,
        ...(signal.evidence ? { evidence: signal.evidence } : {}),
        ...(signal.run ? { runResults: signal.run } : {}),
        ...(entry.definitionHash ? { definitionHash: entry.definitionHash } : {}),
      },
    });
    const outcome = result.recertifyOutcome ?? 'not_governed';
    if (outcome === 'not_governed') {
      outcomes.set(table.id, { table: entry.name, outcome, driftDetected: false });
      continue;
    }
    for (const effect of result.effects) {
      if (effect.type === 'record_ingest') {
        ingests.push({ id: table.id, hash: entry.definitionHash ?? null });
      } else if (effect.type === 'file_recertification') {
        requests.push({
          tableId: table.id,
          cause: effect.cause,
          details: {
            trigger: signal.trigger,
            ...(signal.evidence ? { evidence: signal.evidence } : {}),
            ...(entry.definitionHash ? { definitionHash: entry.definitionHash } : {}),
          },
          actor: caller,
        });
      } else {
        throw new Error(`recertify: unexpected effect ${effect.type}`);
      }
    }
    const ingested = result.effects.some((effect) => effect.type === 'record_ingest');
    outcomes.set(table.id, {
      table: entry.name,
      outcome,
      driftDetected,
      ...(ingested && table.state === 'PENDING_REVIEW' ? { staleSubmission: true as const } : {}),
    });
  }
  await recordAudits(tx, ctx.clock, audits);
  if (ingests.length > 0) {
    // An UPDATE … FROM locks its rows in the join's order, not the ids': parallel signals of one run would
    // deadlock on them. Locked first in id order, the update then waits on nothing it does not already hold.
    await tx.query('SELECT id FROM gds.tables WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE', [
      ingests.map((i) => i.id),
    ]);
    await tx.query(
      `UPDATE gds.tables t SET data_version = t.data_version + 1,
              definition_checksum = COALESCE(i.hash, t.definition_checksum)
         FROM unnest($1::text[], $2::text[]) AS i(id, hash)
        WHERE t.id = i.id`,
      [ingests.map((i) => i.id), ingests.map((i) => i.hash)],
    );
  }
  await fileRecertificationRequests(tx, ctx.clock, requests);
  return outcomes;
}
