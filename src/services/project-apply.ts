// `gds apply --dbt DIR`: carries out a plan (project-plan.ts): the tables it creates or replaces in batches
// (below), the others table by table, at most `concurrency` tables at a time (the transport waits out 429s
// and their Retry-After). Per table, in order: the definition
// (register, or replace when it changed), its gate1.yml, its contract intent, and with `submit` the move to
// PENDING_REVIEW, never of a CERTIFIED table (a write that leaves it CERTIFIED does not undo its
// certification: `unchanged`, with its reason); a table the plan shows `submit` (--submit: QUARANTINED,
// nothing else changed, as a run killed before its submissions leaves it) is only submitted, when it is still
// QUARANTINED right before.
// Each step goes through the same service function as `push`, `gate apply` and
// `contract set-intent`: it compares with what the service holds right before writing and sends the version
// it compared with, so the service writes only a real change, once, however many applies run at the same
// time. A run killed at any point and run again plans again from what the service holds: a table already
// registered is matched by its source and only what still differs is written; a registration that raced
// another (409 with the existing id) of the same name becomes a replacement of that table, which is "no
// change" when the other writer sent the same definition (the service says so, after checking the owner). A
// table of another name holding the name's slug or the source is never replaced: that create fails (exit 6).
// One table failing does not stop the others.
//
// Ownership: every write names the plan's project (the definition, gate1.yml, contract intent, submission and
// removal, in batches and one by one), and the service refuses (409 `owned_elsewhere`), under the table's row
// lock, to write a table another project owns: a table another project registered or adopted since the plan
// is left as it is. A table the plan shows owned elsewhere fails (exit 6) unless --adopt named it: then its
// owner is recorded first (compare-and-set on the owner the plan saw, audited).
// --prune removes only after every create and replace of the run succeeded (none failed, none refused).
import { REQUEST_BODY_LIMIT_BYTES } from '../core/artifact-bounds.js';
import { CliError, ExitCode } from '../core/errors.js';
import type { ApiClient } from '../client/index.js';
import type { ArtifactBatchItem, ArtifactBatchItemResult } from '../client/areas/artifacts.js';
import { ApiError } from '../client/errors.js';
import type { PlannedTable, ProjectPlan, TableWork } from './project-plan-types.js';
import { mapBounded } from './map-bounded.js';
import { applyGate, submitGate } from './gates.js';
import { setIntent } from './contract-intent.js';
import { pushArtifact } from './artifacts.js';
import { slugOf } from '../core/table-slug.js';
import { nodeSelector } from '../core/dbt/node-selector.js';
import { shellWord } from '../core/shell-word.js';
import { onOneLine } from '../core/terminal-text.js';

export type ApplyClient = Pick<
  ApiClient,
  'tables' | 'connectors' | 'artifacts' | 'gates' | 'gateJobs' | 'contracts'
>;

export type ApplyStep =
  'adopt' | 'migrate' | 'register' | 'replace' | 'gate1' | 'contract' | 'submit' | 'remove';

/** One thing apply did (or found already so). */
export interface ApplyAction {
  table: string;
  tableId: string | null;
  step: ApplyStep;
  /** `done`: written; `unchanged`: the service already held it (another writer, or an earlier run). */
  outcome: 'done' | 'unchanged' | 'failed';
  /** The version written, when the step has one (definition or gate1.yml). */
  version?: number;
  /** Why a step wrote nothing, when it is not plain (a CERTIFIED table apply --submit leaves as it is). */
  reason?: string;
  /** `suggestion`: what to do, as the command alone would say it (a 409's `gds env promote …`). */
  error?: { exitCode: number; code: string; message: string; suggestion?: string };
}

export interface ApplyOptions {
  concurrency?: number;
  /**
   * Move the changed tables to PENDING_REVIEW after applying (`gate submit`); the plan's `submit` tables are
   * submitted whatever this says (the plan was made with --submit).
   */
  submit?: boolean;
  /** Soft-delete the gone tables. */
  prune?: boolean;
  /** Turns a client failure into the CliError the person sees (the session's mapping). */
  describe: (error: unknown) => unknown;
  /** Called after each action, as it happens. */
  onAction?: (action: ApplyAction) => void;
  /** Write created and replaced tables in batches (POST /api/artifacts/batch); default true. */
  batch?: boolean;
}

export interface ApplySummary {
  actions: ApplyAction[];
  applied: number;
  failed: { table: string; tableId: string | null; step: ApplyStep; error: CliError }[];
  /** Gone tables not removed because a create or replace of the run failed or was refused (--prune). */
  pruneSkipped: number;
}

/** The tables apply writes: created, replaced, submitted, owned elsewhere (refused), adopted or migrated. */
export function tablesToWrite(plan: ProjectPlan): PlannedTable[] {
  return plan.tables.filter(
    (t) =>
      t.action === 'create' ||
      t.action === 'replace' ||
      t.action === 'submit' ||
      t.action === 'owned-elsewhere' ||
      (t.action === 'unchanged' && (t.adopt !== undefined || t.migrate === true)),
  );
}

/** Whether apply has anything to do (write, refuse, or with `prune` remove). */
export function hasWork(plan: ProjectPlan, options: { prune?: boolean } = {}): boolean {
  return tablesToWrite(plan).length > 0 || (options.prune === true && plan.counts.gone > 0);
}

function asCliError(error: unknown, describe: ApplyOptions['describe']): CliError {
  const described = describe(error);
  if (described instanceof CliError) return described;
  return new CliError(described instanceof Error ? described.message : String(described), {
    exitCode: ExitCode.Failure,
    code: 'failed',
  });
}

class StepFailure extends Error {
  constructor(
    readonly step: ApplyStep,
    readonly tableId: string | null,
    readonly error: CliError,
  ) {
    super(error.message);
  }
}

/** Applies the plan's create, replace (and with `prune`, gone) tables; never throws for one table's failure. */
export async function applyPlan(
  client: ApplyClient,
  plan: ProjectPlan,
  options: ApplyOptions,
): Promise<ApplySummary> {
  const actions: ApplyAction[] = [];
  const failed: ApplySummary['failed'] = [];
  const record = (action: ApplyAction) => {
    actions.push(action);
    options.onAction?.(action);
  };
  let applied = 0;
  const fail = (table: PlannedTable, step: ApplyStep, tableId: string | null, error: CliError) => {
    record({
      table: table.table,
      tableId,
      step,
      outcome: 'failed',
      error: {
        exitCode: error.exitCode,
        code: error.code,
        message: error.message,
        ...(error.suggestion === undefined ? {} : { suggestion: error.suggestion }),
      },
    });
    failed.push({ table: table.table, tableId, step, error });
  };
  const failure = (table: PlannedTable, error: unknown) =>
    error instanceof StepFailure
      ? error
      : new StepFailure('register', table.tableId, asCliError(error, options.describe));
  const run = async (table: PlannedTable) => {
    try {
      if (table.action === 'gone') await removeTable(client, plan, table, options, record);
      else await applyTable(client, plan, table, options, record);
      applied += 1;
    } catch (error) {
      const { step, tableId, error: cause } = failure(table, error);
      fail(table, step, tableId, cause);
    }
  };
  const concurrency = options.concurrency ?? 4;
  const writes = tablesToWrite(plan);
  let oneByOne = writes;
  if (options.batch !== false) {
    const failedTables = new Set<PlannedTable>();
    const { written, leftOver, unfinished } = await applyInBatches(client, plan, writes.filter(batchable), {
      concurrency: Math.min(concurrency, 2),
      describe: (error) => asCliError(error, options.describe),
      record,
      fail: (table, step, tableId, error) => {
        failedTables.add(table);
        fail(table, step, tableId, error);
      },
    });
    await mapBounded(unfinished, concurrency, async ({ table, tableId, from }) => {
      try {
        await writeRulesAndIntent(client, plan, table, tableId, from, options, record);
        written.push({ table, tableId });
      } catch (error) {
        const { step: name, error: cause } = failure(table, error);
        failedTables.add(table);
        fail(table, name, tableId, cause);
      }
    });
    const done = written.filter(({ table }) => !failedTables.has(table));
    applied += done.length;
    oneByOne = [...writes.filter((table) => !batchable(table)), ...leftOver];
    if (options.submit === true)
      await mapBounded(done, concurrency, async ({ table, tableId }) => {
        try {
          await submitTable(client, plan, { ...table, tableId }, options, record);
        } catch (error) {
          applied -= 1;
          fail(table, 'submit', tableId, failure(table, error).error);
        }
      });
  }
  await mapBounded(oneByOne, concurrency, run);
  const gone = options.prune === true ? plan.tables.filter((t) => t.action === 'gone') : [];
  // A failed or refused create or replace may be a model renamed or moved: its old table stays until the run
  // succeeds.
  const held = failed.length > 0 || plan.tables.some((t) => t.action === 'refused');
  if (!held) await mapBounded(gone, concurrency, run);
  return { actions, applied, failed, pruneSkipped: held ? gone.length : 0 };
}

/**
 * Records the plan's project as the owner of a table adopted (--adopt), or of one recorded under the id an
 * earlier gds derived for it (migrate), the owner the plan saw being `previous`.
 */
async function recordOwner(
  client: ApplyClient,
  plan: ProjectPlan,
  table: PlannedTable,
  options: ApplyOptions,
  record: (action: ApplyAction) => void,
): Promise<void> {
  const id = table.tableId;
  if (id === null) return;
  const [kind, previous, reason] =
    table.adopt !== undefined
      ? (['adopt', table.adopt.from, 'adopt'] as const)
      : table.migrate === true
        ? (['migrate', table.owner ?? null, 'migrate'] as const)
        : [undefined, null, undefined];
  if (kind === undefined) return;
  await step(kind, id, options.describe, async () => {
    const answer = await client.tables.setProject(id, { project: plan.project.id, previous, reason });
    record({ table: table.table, tableId: id, step: kind, outcome: answer.changed ? 'done' : 'unchanged' });
  });
}

async function step<R>(
  name: ApplyStep,
  tableId: string | null,
  describe: ApplyOptions['describe'],
  work: () => Promise<R>,
): Promise<R> {
  try {
    return await work();
  } catch (error) {
    throw new StepFailure(name, tableId, asCliError(error, describe));
  }
}

/**
 * Which of a table's writes apply sends, one by one or in a batch: every one for a table it creates, else those
 * the plan found changed.
 */
function sends(
  table: PlannedTable,
  work: TableWork,
): { definition: boolean; gate1: boolean; contract: boolean } {
  const created = table.tableId === null;
  return {
    definition: created || table.changes.definition,
    gate1: work.gate1 !== undefined && (created || table.changes.gate1),
    contract: work.intent !== undefined && (created || table.changes.contract),
  };
}

async function applyTable(
  client: ApplyClient,
  plan: ProjectPlan,
  table: PlannedTable,
  options: ApplyOptions,
  record: (action: ApplyAction) => void,
): Promise<void> {
  const work = table.work as TableWork;
  if (table.action === 'owned-elsewhere') {
    throw new StepFailure(
      'adopt',
      table.tableId,
      new CliError(`${table.table} is ${table.reason ?? 'owned elsewhere'}`, {
        exitCode: ExitCode.Conflict,
        code: 'owned_elsewhere',
        // --exclude takes the dbt node's name, --adopt the table's (a promoted table's is not the model's).
        suggestion: `Leave the model out (--exclude ${shellWord(table.selector ?? nodeSelector(table.uniqueId) ?? table.table)}), or pass --adopt ${shellWord(table.heldName ?? table.table)} to take the table over.`,
      }),
    );
  }
  await recordOwner(client, plan, table, options, record);
  if (table.action === 'submit') return submitTable(client, plan, table, options, record);
  if (table.action === 'unchanged') return;
  const connectorId = plan.connector.id ?? undefined;
  const project = plan.project.id;
  const base = { table: table.table };
  let tableId = table.tableId;
  if (tableId === null) {
    tableId = await step('register', null, options.describe, async () => {
      try {
        const outcome = await pushArtifact(client, work.artifact, { connectorId, project });
        const held =
          outcome.kind === 'pushed' ? outcome.result : outcome.kind === 'unchanged' ? outcome.held : null;
        const id = held?.tableId ?? held?.governanceId;
        if (id === undefined) throw new Error(`The service registered ${table.table} without naming its id.`);
        record({
          ...base,
          tableId: id,
          step: 'register',
          outcome: outcome.kind === 'pushed' ? 'done' : 'unchanged',
        });
        return id;
      } catch (error) {
        // Registered since the plan (another apply, or this one killed after the write): replace that table,
        // which the service answers "no change" when it holds this definition already, and refuses when
        // another project owns it. Only a table of this environment and of this name.
        const existingId = existingIdOf(error);
        if (existingId === undefined) throw error;
        const existing = await client.tables.status(existingId);
        if (existing.environmentLabel !== plan.connector.environmentLabel) throw error;
        if (existing.name.toLowerCase() !== work.artifact.table.toLowerCase())
          throw heldByAnother(work.artifact, { ...existing, id: existingId });
        return replaceDefinition(existingId);
      }
    });
  } else if (table.changes.definition) {
    const id = tableId;
    await step('replace', id, options.describe, () => replaceDefinition(id));
  }
  async function replaceDefinition(id: string): Promise<string> {
    const outcome = await pushArtifact(client, work.artifact, { connectorId, replaceId: id, project });
    record({
      ...base,
      tableId: id,
      step: 'replace',
      outcome: outcome.kind === 'pushed' ? 'done' : 'unchanged',
    });
    return id;
  }
  await writeRulesAndIntent(client, plan, table, tableId, 'gate1', options, record);
  if (options.submit === true) await submitTable(client, plan, { ...table, tableId }, options, record);
}

/**
 * The table's gate1.yml and contract intent by their single writes (those the plan found changed, from `from`
 * on): after its definition, or after a batch step the database rolled back (a 503: the transport waits out its
 * Retry-After and sends it again, as it does every single write).
 */
async function writeRulesAndIntent(
  client: ApplyClient,
  plan: ProjectPlan,
  table: PlannedTable,
  id: string,
  from: 'gate1' | 'contract',
  options: ApplyOptions,
  record: (action: ApplyAction) => void,
): Promise<void> {
  const work = table.work as TableWork;
  const project = plan.project.id;
  const base = { table: table.table };
  const sent = sends(table, work);
  const { gate1, intent } = work;
  if (from === 'gate1' && gate1 !== undefined && sent.gate1) {
    await step('gate1', id, options.describe, async () => {
      const outcome = await applyGate(client, id, gate1, { project });
      record({
        ...base,
        tableId: id,
        step: 'gate1',
        outcome: outcome.kind === 'applied' ? 'done' : 'unchanged',
        ...(outcome.kind === 'applied' ? { version: outcome.applied.version } : {}),
      });
    });
  }
  if (intent !== undefined && sent.contract) {
    await step('contract', id, options.describe, async () => {
      const outcome = await setIntent(client, id, intent, { project });
      record({
        ...base,
        tableId: id,
        step: 'contract',
        outcome: outcome.kind === 'set' ? 'done' : 'unchanged',
      });
    });
  }
}

/**
 * Moves a table to PENDING_REVIEW (`apply --submit`), never a CERTIFIED one (`ifNotCertified`): a change that
 * leaves a table CERTIFIED (its contract intent, its gate1.yml, its owner) is not a reason to undo a steward's
 * certification, which a person does with `gds gate submit`. One the plan shows `submit` (QUARANTINED, nothing
 * else to write) only while it still is: a submission or a certification since is `unchanged`; one waiting for
 * review with a stale proof while it still waits on a stale proof (`ifStale`, checked by the service under the
 * table's row lock): one a person submitted since is `unchanged`, with its reason.
 */
async function submitTable(
  client: ApplyClient,
  plan: ProjectPlan,
  table: PlannedTable,
  options: ApplyOptions,
  record: (action: ApplyAction) => void,
): Promise<void> {
  const id = table.tableId as string;
  await step('submit', id, options.describe, async () => {
    const state = table.action === 'submit' ? (await client.tables.status(id)).state : undefined;
    // A stale submission is submitted again only while it still waits for review (one a steward rejected
    // meanwhile is QUARANTINED as it was submitted: for a person to submit again).
    const submits =
      table.staleSubmission === true
        ? state === 'PENDING_REVIEW'
        : state === undefined || state === 'QUARANTINED';
    // ifStale: and while its proof is still stale, under the table's row lock: one a person submitted since
    // the plan is not scanned and its steward notified a second time.
    const outcome = submits
      ? await submitGate(client, id, {
          ifNotCertified: true,
          project: plan.project.id,
          ...(table.staleSubmission === true ? { ifStale: true } : {}),
        })
      : undefined;
    const certified = outcome?.kind === 'skipped' || state === 'CERTIFIED';
    record({
      table: table.table,
      tableId: id,
      step: 'submit',
      outcome: outcome?.kind === 'submitted' ? 'done' : 'unchanged',
      ...(certified ? { reason: certifiedNotSubmitted(table.table) } : {}),
      ...(outcome?.kind === 'fresh' ? { reason: alreadySubmitted(outcome.proof) } : {}),
    });
  });
}

/** Why apply --submit leaves a table planned as a stale submission that someone submitted since. */
function alreadySubmitted(proof: { id: string | null; ranAt: string }): string {
  return `already submitted since the plan (proof ${proof.id ?? ''} of ${proof.ranAt}, fresh): it waits for review as it is`;
}

/** Why apply --submit (and the plan that shows it) leaves a CERTIFIED table as it is. */
export function certifiedNotSubmitted(table: string): string {
  return `CERTIFIED: apply --submit does not submit it again (it stays CERTIFIED); gds gate submit ${shellWord(table)} submits it for review`;
}

async function removeTable(
  client: ApplyClient,
  plan: ProjectPlan,
  table: PlannedTable,
  options: ApplyOptions,
  record: (action: ApplyAction) => void,
): Promise<void> {
  const id = table.tableId as string;
  await recordOwner(client, plan, table, options, record);
  await step('remove', id, options.describe, async () => {
    await client.tables.remove(id, { project: plan.project.id });
    record({ table: table.table, tableId: id, step: 'remove', outcome: 'done' });
  });
}

/**
 * A create refused because a table of another name was registered since the plan with the same source, or with
 * a name of the same slug (`raw-source-0` for `raw_source_0`): replacing it would rename it.
 */
function heldByAnother(
  artifact: TableWork['artifact'],
  existing: { id: string; name: string; source: string | null },
): CliError {
  const by =
    (existing.source ?? '').toLowerCase() === artifact.source.toLowerCase()
      ? `its source ${artifact.source}`
      : `a name of the same slug (${slugOf(artifact.table)}), and the service holds one table a slug`;
  return new CliError(
    `${artifact.table} was to be a new table, but table ${onOneLine(existing.name)} (${existing.id}) was registered meanwhile with ${by}: apply does not make it ${artifact.table} (a rename).`,
    {
      exitCode: ExitCode.Conflict,
      code: 'name_conflict',
      suggestion: `Plan again (gds plan) to see who holds it; if the names clash, give the model another alias (dbt's alias config).`,
      details: { existingId: existing.id, existingName: existing.name },
    },
  );
}

/** The id of the table a 409 says holds the name or source already (push's hint, or the service's details). */
function existingIdOf(error: unknown): string | undefined {
  if (!(error instanceof CliError) || error.exitCode !== ExitCode.Conflict) return undefined;
  const details = error.details as { existingId?: unknown; server?: { existingId?: unknown } } | undefined;
  const id = details?.existingId ?? details?.server?.existingId;
  return typeof id === 'string' ? id : undefined;
}

// Batches (POST /api/artifacts/batch): up to BATCH_SIZE tables a request, and no more bytes than the service's
// request body limit (a batch of 50 large views would pass it), each table's definition, gate1.yml
// and contract intent in one item, with the versions the plan saw as their If-Match. The service writes each
// step as its single write would and reports each; a step that failed is the same failure as the single
// write's. A first apply of 500 models is then a handful of requests, within the default rate limit. What a
// batch cannot say is left to the table-by-table path: a table registered since the plan (409 naming it), an
// item whose first step met a deadlock (503, nothing of it stored: the single writes send it again after
// Retry-After), and a whole service without the batch route (404). An item whose later step met one (its
// definition, or gate1.yml, stored) is finished from that step by its single writes.

export const BATCH_SIZE = 50;
/** The most bytes of a batch's body: the service's limit on every request body (413 over it). */
export const BATCH_BODY_BYTES = REQUEST_BODY_LIMIT_BYTES;
/** `{"items":[` and `]}` around the items. */
const BATCH_ENVELOPE_BYTES = Buffer.byteLength(JSON.stringify({ items: [] }));

/**
 * The items cut into batches in order: at most BATCH_SIZE each, and within BATCH_BODY_BYTES as JSON. An item
 * too big for any batch goes alone (the service refuses it as its single write would).
 */
export function batchesOf<T>(items: T[], bodyOf: (item: T) => unknown): T[][] {
  const batches: T[][] = [];
  let batch: T[] = [];
  let bytes = BATCH_ENVELOPE_BYTES;
  for (const item of items) {
    const size = Buffer.byteLength(JSON.stringify(bodyOf(item)));
    if (batch.length === BATCH_SIZE || (batch.length > 0 && bytes + 1 + size > BATCH_BODY_BYTES)) {
      batches.push(batch);
      batch = [];
      bytes = BATCH_ENVELOPE_BYTES;
    }
    bytes += (batch.length > 0 ? 1 : 0) + size;
    batch.push(item);
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

type Step = NonNullable<ArtifactBatchItemResult['definition']>;

export interface BatchOutcome {
  /** Tables every step of which the service answered (done, unchanged or failed), with their ids. */
  written: Array<{ table: PlannedTable; tableId: string }>;
  /** Tables to write one by one: the batch could not say (see the head of this file). */
  leftOver: PlannedTable[];
  /**
   * Tables a later step of which the database rolled back (503: its definition, or gate1.yml, is stored): their
   * single writes finish them from that step.
   */
  unfinished: Array<{ table: PlannedTable; tableId: string; from: 'gate1' | 'contract' }>;
}

/** A table apply may send in a batch: created or replaced, and not adopted or moved to its project first. */
export function batchable(table: PlannedTable): boolean {
  return (
    (table.action === 'create' || table.action === 'replace') &&
    table.adopt === undefined &&
    table.migrate !== true &&
    table.work !== undefined
  );
}

function itemOf(plan: ProjectPlan, table: PlannedTable): ArtifactBatchItem {
  const work = table.work as TableWork;
  const created = table.tableId === null;
  const sent = sends(table, work);
  const item: ArtifactBatchItem = {};
  if (sent.definition) {
    const { artifact } = work;
    item.definition = {
      filename: artifact.filename,
      content: artifact.content,
      mimeType: artifact.mimeType,
      ...(plan.connector.id === null ? {} : { connectorId: plan.connector.id }),
      ...(created ? {} : { replaceId: table.tableId as string }),
      ...(artifact.sourceFlag === undefined ? {} : { source: artifact.sourceFlag }),
      project: plan.project.id,
    };
    if (!created && table.seen !== undefined) item.definitionVersion = table.seen.definitionVersion;
  } else {
    // The project goes with the gate1.yml and intent (the definition's does when there is one): the service
    // writes them only on the project's table.
    item.tableId = table.tableId as string;
    item.project = plan.project.id;
  }
  if (work.gate1 !== undefined && sent.gate1)
    item.gate1 = { content: work.gate1.text, version: created ? 0 : (table.seen?.gate1Version ?? 0) };
  if (work.intent !== undefined && sent.contract)
    item.intent = {
      request: work.intent,
      ...(created || table.seen === undefined ? {} : { revision: table.seen.contractRevision }),
    };
  return item;
}

/** Whether a failed registration is a 409 naming the table that holds the name or source already. */
function registeredSince(step: Step | undefined): boolean {
  const details = step?.error?.error.details as { existingId?: unknown } | undefined;
  return step?.status === 409 && typeof details?.existingId === 'string';
}

/**
 * Whether the item's first step is a 503 (a deadlock the database rolled back, the service busy): an item stops
 * at its first failed step, so nothing of it was stored, and its single writes wait out Retry-After and send it
 * again where the batch's step cannot.
 */
function refusedUnwritten(result: ArtifactBatchItemResult): boolean {
  return (result.definition ?? result.gate1 ?? result.contract)?.status === 503;
}

/**
 * The later step of the item that met a 503 (a deadlock the database rolled back, the service busy), the steps
 * before it done: the item stopped there, and that step's single write sends it again after Retry-After.
 */
function refusedLaterStep(result: ArtifactBatchItemResult): 'gate1' | 'contract' | undefined {
  if (result.definition !== undefined && result.gate1?.status === 503) return 'gate1';
  if ((result.definition !== undefined || result.gate1 !== undefined) && result.contract?.status === 503)
    return 'contract';
  return undefined;
}

/**
 * Writes `tables` (all batchable) in batches; `record` hears each step as the table-by-table path reports it,
 * `fail` each failed step with the error its single write would have raised.
 */
export async function applyInBatches(
  client: Pick<ApiClient, 'artifacts'>,
  plan: ProjectPlan,
  tables: PlannedTable[],
  options: {
    concurrency: number;
    describe: (error: unknown) => CliError;
    record: (action: ApplyAction) => void;
    fail: (table: PlannedTable, step: ApplyStep, tableId: string | null, error: CliError) => void;
  },
): Promise<BatchOutcome> {
  const chunks = batchesOf(
    tables.map((table) => ({ table, item: itemOf(plan, table) })),
    (entry) => entry.item,
  );
  const written: BatchOutcome['written'] = [];
  const leftOver: PlannedTable[] = [];
  const unfinished: BatchOutcome['unfinished'] = [];
  let unsupported = false;
  await mapBounded(chunks, options.concurrency, async (entries) => {
    const chunk = entries.map((entry) => entry.table);
    if (unsupported) {
      leftOver.push(...chunk);
      return;
    }
    let results: ArtifactBatchItemResult[];
    try {
      results = await client.artifacts.batch(entries.map((entry) => entry.item));
    } catch (error) {
      if (error instanceof ApiError && error.status === 404 && error.code === 'route_not_found') {
        unsupported = true;
        leftOver.push(...chunk);
        return;
      }
      for (const table of chunk) options.fail(table, 'register', table.tableId, options.describe(error));
      return;
    }
    for (const [index, table] of chunk.entries()) {
      const result = results.find((r) => r.index === index);
      if (result === undefined || registeredSince(result.definition) || refusedUnwritten(result)) {
        leftOver.push(table);
        continue;
      }
      const from = refusedLaterStep(result);
      if (from !== undefined && result.tableId !== null) {
        // The item stopped at the refused step: nothing after it was sent.
        const { [from]: _refused, ...done } = result;
        report(table, done, options);
        unfinished.push({ table, tableId: result.tableId, from });
        continue;
      }
      if (result.tableId !== null) written.push({ table, tableId: result.tableId });
      report(table, result, options);
    }
  });
  return { written, leftOver, unfinished };
}

function report(
  table: PlannedTable,
  result: ArtifactBatchItemResult,
  options: Parameters<typeof applyInBatches>[3],
): void {
  const steps: Array<[ApplyStep, Step | undefined]> = [
    [table.tableId === null ? 'register' : 'replace', result.definition],
    ['gate1', result.gate1],
    ['contract', result.contract],
  ];
  for (const [name, step] of steps) {
    if (step === undefined) continue;
    const tableId = result.tableId ?? table.tableId;
    if (step.error !== undefined) {
      const error = new ApiError({
        status: step.status,
        code: step.error.error.code,
        message: step.error.error.message,
        details: step.error.error.details,
        requestId: undefined,
        retryAfterSeconds: undefined,
        method: 'POST',
        url: '/api/artifacts/batch',
      });
      options.fail(table, name, tableId, options.describe(error));
      continue;
    }
    options.record({
      table: table.table,
      tableId,
      step: name,
      outcome: step.changed ? 'done' : 'unchanged',
      // As the table-by-table path reports: a version for a gate1.yml written, none for a definition.
      ...(step.changed && name === 'gate1' && step.version !== undefined ? { version: step.version } : {}),
    });
  }
}
