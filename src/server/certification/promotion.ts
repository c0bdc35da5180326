// Environment promotion and portable bundles (`gds env promote`): a Mode A table's definition is
// registered on a connector of another environment through the same rules as a push, then its
// gate1.yml and contract fields follow it.
import * as diff from 'diff';
import * as yaml from 'yaml';
import { definitionSummary, parseArtifact } from '../../core/artifacts/index.js';
import { closest } from '../../core/did-you-mean.js';
import { promotedName } from '../../core/promoted-name.js';
import { slugOf } from '../../core/table-slug.js';
import { normaliseGateYaml, sameGateRules, unifiedDiff } from '../../core/gate-diff.js';
import type { ArtifactColumn, DefinitionSummary } from '../../core/artifacts/index.js';
import type { Caller } from '../auth/caller.js';
import { recordAudit, reserveAuditSlot } from '../audit.js';
import {
  inEnvironmentScope,
  requireTargetEnvironment,
  visibleEnvironments,
  workspaceEnvironments,
} from './access.js';
import type { AppContext } from '../context.js';
import type { Queryable } from '../db/handle.js';
import { badRequest, HttpError, notFound } from '../errors.js';
import { checkIds } from '../input-rule.js';
import { storeGate1Rules } from '../gates/gate1-apply.js';
import { currentGate1 } from '../gates/gate1-store.js';
import type { ConnectorRow } from '../governance/definitions.js';
import type { DefinitionInput } from '../governance/definitions.js';
import {
  checkProjectId,
  conflictOfUniqueViolation,
  loadConnector,
  lockRegistrations,
  prepareDefinition,
  registerPrepared,
  replaceRefusal,
} from '../governance/definitions.js';
import { governedTransaction } from '../governance/engine.js';
import { checkVersion } from '../governance/precondition.js';
import { recentJobs } from '../governance/jobs.js';
import type { TableRow } from '../governance/tables.js';
import { loadTable, TABLE_COLUMNS, toTableRow } from '../governance/tables.js';
import { splitSource } from '../warehouse.js';
import type { BundleArtifact, BundleBody } from './bundle.js';
import { BUNDLE_FORMAT, BUNDLE_FORMAT_VERSION } from './bundle.js';
import type { ContractVersionMove } from './contracts.js';
import { fieldsOf, findContract, liveContract, updateContract } from './contracts.js';

export interface PromotionResult {
  tableId: string;
  environmentLabel: string;
  connectorId: string;
  governanceId: string;
  trackingUrl: string;
  job: { id: string; type: string; status: string } | null;
  changed?: boolean;
}

/** The definition as a JSON artifact: the table name, its source and its registered columns. */
function renderArtifact(
  name: string,
  source: string,
  columns: ArtifactColumn[],
  decisionContext?: string,
): BundleArtifact {
  const document = {
    table: name,
    source,
    columns: columns.map((c) => ({ ...c, type: c.type ?? 'text', required: c.required ?? false })),
    ...(decisionContext === undefined ? {} : { decision_context: decisionContext }),
  };
  return { filename: `${name}.json`, content: `${JSON.stringify(document, null, 2)}\n`, mimeType: 'json' };
}

/** What the table declares: its last pushed artifact, else its registered columns; null without a source (Mode B). */
export function heldDefinition(
  table: Pick<TableRow, 'mode' | 'source' | 'artifact' | 'name' | 'columns'>,
): DefinitionSummary | null {
  if (table.mode !== 'MODE_A' || !table.source) return null;
  return definitionSummary(table.artifact ?? { table: table.name, columns: table.columns }, table.source);
}

/** The refusal of a Mode B (custody) table's promotion, its bundle's export, or the import of a bundle of one. */
export function notPromotable(
  table: Pick<TableRow, 'name' | 'mode' | 'environmentLabel'> & { id?: string | undefined },
) {
  return badRequest(
    'not_promotable',
    `Table ${table.name} is a Mode B (custody) table: gds promotes and bundles only warehouse-connected (Mode A) definitions, a deviation from the spec (docs/spec-deviations.md). Create the custody table in the target environment through the service, then copy its gate1.yml and contract onto it; its rows stay where they are.`,
    {
      tableId: table.id ?? null,
      name: table.name,
      mode: table.mode,
      environmentLabel: table.environmentLabel,
    },
  );
}

/**
 * Everything a bundle carries, read from the table. Mode A only, a deviation from §4.9's scope rule
 * (docs/spec-deviations.md): a promotion lands through the push rules on a connector of the target
 * environment, and a custody table has neither a connector nor a warehouse object there.
 */
export async function bundleOf(q: Queryable, table: TableRow, createdAt: string): Promise<BundleBody> {
  if (table.mode !== 'MODE_A' || !table.source) throw notPromotable(table);
  const gate1 = await currentGate1(q, table.id);
  const contract = await findContract(q, table.id);
  return {
    format: BUNDLE_FORMAT,
    formatVersion: BUNDLE_FORMAT_VERSION,
    table: {
      id: table.id,
      name: table.name,
      mode: table.mode,
      environmentLabel: table.environmentLabel,
      source: table.source,
      ...(table.connectorId === null ? {} : { connectorId: table.connectorId }),
      ...(table.project === null ? {} : { project: table.project }),
    },
    artifact: renderArtifact(table.name, table.source, table.columns, table.artifact?.decisionContext),
    ...(gate1 ? { gate1: { version: gate1.version, content: gate1.content } } : {}),
    ...(contract ? { contract: { ...fieldsOf(contract) } } : {}),
    createdAt,
  };
}

/**
 * The connector to promote onto: the one named, or the target environment's active one. Refused in the
 * order a caller can act on: 404 for an environment the workspace does not have (the one meant among those
 * the caller sees), 403 for one outside the caller's scope, 400 for one without an active connector.
 */
export async function targetConnector(
  q: Queryable,
  caller: Caller,
  to: string,
  connectorId: string | undefined,
): Promise<ConnectorRow> {
  const { workspaceId } = caller;
  if (!inEnvironmentScope(caller, to)) {
    await requireKnownEnvironment(q, caller, to);
    requireTargetEnvironment(caller, to);
  }
  if (connectorId !== undefined) {
    const connector = await loadConnector(q, workspaceId, connectorId);
    if (connector.environmentLabel !== to) {
      throw badRequest(
        'connector_environment_mismatch',
        `Connector ${connector.name} is in ${connector.environmentLabel}, not ${to}: name a connector of ${to}.`,
        { connectorId, environmentLabel: connector.environmentLabel },
      );
    }
    return connector;
  }
  const [row] = await q.query<{ id: string }>(
    `SELECT id FROM gds.connectors WHERE workspace_id = $1 AND environment_label = $2 AND status = 'ACTIVE'
      ORDER BY created_at, id LIMIT 1`,
    [workspaceId, to],
  );
  if (!row) {
    await requireKnownEnvironment(q, caller, to);
    throw badRequest(
      'no_connector_for_environment',
      `Environment ${to} has no active connector to register the table on: a workspace admin adds one.`,
      { environmentLabel: to },
    );
  }
  return loadConnector(q, workspaceId, row.id);
}

/** 404 when the workspace has no environment `to`, naming the ones the caller sees (and the one meant). */
async function requireKnownEnvironment(q: Queryable, caller: Caller, to: string): Promise<void> {
  const environments = await workspaceEnvironments(q, caller.workspaceId);
  if (environments.includes(to)) return;
  const visible = visibleEnvironments(caller);
  const seen = visible === null ? environments : environments.filter((e) => visible.includes(e));
  const near = closest(to, seen);
  throw notFound(
    'environment_not_found',
    `Environment ${to} is not an environment of this workspace (the ones you may use: ${seen.join(', ') || 'none'}).`,
    { environmentLabel: to, environments: seen, ...(near === undefined ? {} : { didYouMean: near }) },
  );
}

/**
 * The project (`gds apply`) a promotion registers its table under: the promoted table's, so that planning the
 * project in the target environment finds the table its own (and never moves the project's table there). An id
 * gds derived for the project (src/services/project-plan.ts derivedProjectId: dbt's name with the connectors,
 * `shop@con_dev`, or the environment, `shop@dev`) names where the table was: in the target it is the target
 * connector's, `shop@con_prod`, the id gds derives there. Any other id (gds.yml's `project:`) is kept.
 */
export function promotedProject(
  table: Pick<TableRow, 'project' | 'environmentLabel' | 'connectorId'>,
  connector: Pick<ConnectorRow, 'id'>,
): string | undefined {
  const { project } = table;
  if (project === null) return undefined;
  const derived = /^([A-Za-z0-9_]+)@(.+)$/.exec(project);
  if (derived === null) return project;
  const [, name, place = ''] = derived;
  const here =
    place === table.environmentLabel ||
    (table.connectorId !== null && place.split('+').includes(table.connectorId));
  return here ? `${name}@${connector.id}` : project;
}

/**
 * The project a bundle's import (`--bundle-in`, `--dest-profile`) records on the table it registers: what
 * promoting the bundle's table would record (promotedProject of the project and connector the bundle carries),
 * none for a bundle that names none (one exported before bundles carried it). A bundle is a file anyone may
 * write and seal (its sha256 is no signature), so the project it names is checked as a push's `project` is, and
 * it gives no more than a push naming that project would: it is recorded only on a table the import registers,
 * a table already there being replaced keeping its own project (landBundle), never taken over.
 */
export function bundleProject(
  table: BundleBody['table'],
  connector: Pick<ConnectorRow, 'id'>,
): string | undefined {
  if (table.project === undefined) return undefined;
  const project = checkProjectId(table.project, 'table.project');
  return promotedProject(
    { project, environmentLabel: table.environmentLabel, connectorId: table.connectorId ?? null },
    connector,
  );
}

export interface LandOptions {
  /** The project to record on a table the landing registers (not on one it replaces: that one keeps its own). */
  project?: string | undefined;
  /** The governance id of the table already in the target environment, to replace it. */
  replaceId?: string | undefined;
  /** Compare only: answer the diff, write nothing. */
  dryRun?: boolean | undefined;
  /** `If-Match`: the target table's definition version the promotion was computed from (0: none there). */
  expectedVersion?: number | undefined;
}

export type LandOutcome =
  | { kind: 'preview'; changed: boolean; diff: string }
  | { kind: 'landed'; result: PromotionResult & { changed: boolean } };

/**
 * Registers the bundle's definition on `connector` as a push would, then stores its gate1.yml and
 * contract and audits the landing as `audit.action`. The table of the same name already in that
 * environment is compared first: holding the same definition, gate1.yml and contract, nothing is
 * written (`changed: false`); otherwise it is replaced only when `replaceId` names it (409 otherwise).
 */
export async function landBundle(
  ctx: AppContext,
  caller: Caller,
  bundle: BundleBody,
  connector: ConnectorRow,
  audit: { action: 'TABLE_PROMOTED' | 'BUNDLE_IMPORTED'; details: Record<string, unknown> },
  options: LandOptions = {},
): Promise<LandOutcome> {
  requireTargetEnvironment(caller, connector.environmentLabel);
  const parsed = await parseArtifact({
    fileName: bundle.artifact.filename,
    content: bundle.artifact.content,
    kind: bundle.artifact.mimeType,
  });
  if (!parsed.ok) {
    throw badRequest('invalid_artifact', `The bundle's artifact does not parse: ${parsed.error.message}`);
  }
  const sourceTable = bundle.table.source ? splitSource(bundle.table.source)[1] : parsed.artifact.table;
  const name = promotedName(parsed.artifact.table, bundle.table.environmentLabel, connector.environmentLabel);
  const source = `${connector.schema}.${sourceTable}`;
  const artifact = renderArtifact(name, source, parsed.artifact.columns, parsed.artifact.decisionContext);
  const definition: DefinitionInput = {
    filename: artifact.filename,
    content: artifact.content,
    mimeType: artifact.mimeType,
    connectorId: connector.id,
    source,
  };
  if (options.dryRun === true) {
    const existing = await targetOf(ctx.db, caller, name, connector);
    const diff = await landingDiff(ctx.db, existing, connector, bundle, artifact, source);
    // The target is checked as the promotion would check it, nothing written: the warehouse object there,
    // the table already there and --replace, and whether the caller may replace it.
    if (diff !== '' || !existing)
      await checkLanding(ctx, caller, definition, existing, name, connector, options);
    return { kind: 'preview', changed: diff !== '', diff };
  }
  // Read before the transaction (on PGlite a read of ctx.db inside it would wait for it); a failure
  // matters only if the landing writes: a target already holding it all answers `changed: false`.
  const prepared = await prepareDefinition(ctx, caller, definition).catch((error: unknown) => ({
    failed: error,
  }));
  // One transaction compares and writes, and a promotion's landings in the workspace follow one another
  // (the target may not exist yet, so no row of it can be locked): parallel identical promotions land
  // once and the others answer `changed: false`, with nothing filed or audited.
  try {
    return await governedTransaction(ctx.db, ctx.clock, async (tx) => {
      await lockRegistrations(tx, caller.workspaceId);
      const existing = await targetOf(tx, caller, name, connector);
      const diff = await landingDiff(tx, existing, connector, bundle, artifact, source);
      if (existing && diff === '') {
        const [job] = await recentJobs(tx, existing.id, 1);
        return {
          kind: 'landed',
          result: {
            changed: false,
            tableId: existing.id,
            environmentLabel: connector.environmentLabel,
            connectorId: connector.id,
            governanceId: existing.governanceId,
            trackingUrl: `${ctx.baseUrl()}/dashboard/tables/${existing.id}`,
            job: job ? { id: job.id, type: job.type, status: job.status } : null,
          },
        } satisfies LandOutcome;
      }
      checkTarget(existing, name, connector, options);
      // The precondition once the target is known to be the one --replace names: a refusal above says
      // which table to name, which a version conflict would hide.
      checkVersion(
        `The table '${name}' in ${connector.environmentLabel}`,
        existing?.definitionVersion ?? 0,
        options.expectedVersion,
        `Compare with gds env promote … --dry-run and promote again.`,
      );
      const input = existing
        ? { ...definition, replaceId: existing.governanceId }
        : { ...definition, ...(options.project === undefined ? {} : { project: options.project }) };
      if ('failed' in prepared) throw prepared.failed;
      // The landing's entry reads before the entries of what it does (a replacement, the requests it files).
      const slot = await reserveAuditSlot(tx, ctx.clock);
      const outcome = await registerPrepared(
        ctx,
        tx,
        caller,
        prepared,
        input,
        'push',
        audit.action === 'TABLE_PROMOTED' ? bundle.table.id : undefined,
      );
      const { tableId } = outcome.body;
      const contractVersion = await landRules(ctx, tx, caller, tableId, bundle);
      await recordAudit(
        tx,
        ctx.clock,
        {
          workspaceId: caller.workspaceId,
          userId: caller.userId,
          tableId,
          action: audit.action,
          resource: 'governance_artifact',
          environmentLabel: connector.environmentLabel,
          details: {
            ...audit.details,
            gate1: bundle.gate1 !== undefined,
            contract: bundle.contract !== undefined,
            ...(contractVersion ? { contractVersion } : {}),
          },
        },
        slot,
      );
      return {
        kind: 'landed',
        result: {
          changed: true,
          tableId,
          environmentLabel: connector.environmentLabel,
          connectorId: connector.id,
          governanceId: outcome.body.governanceId,
          trackingUrl: outcome.body.trackingUrl,
          job: outcome.body.job,
        },
      } satisfies LandOutcome;
    });
  } catch (error) {
    throw await conflictOfUniqueViolation(ctx.db, error, caller, name);
  }
}

/** The Mode A table of that name already in the connector's environment, or null. */
/** The table already in the target environment must be the one --replace names, and --replace needs one. */
function checkTarget(
  existing: TableRow | null,
  name: string,
  connector: ConnectorRow,
  options: LandOptions,
): void {
  checkIds({ replaceId: options.replaceId });
  if (existing && options.replaceId !== existing.governanceId) {
    throw new HttpError(
      409,
      'promotion_target_exists',
      `A governance artifact named '${existing.name}' already exists in ${connector.environmentLabel} (${existing.governanceId}); promoting would replace it: pass --replace ${existing.governanceId}`,
      {
        governanceId: existing.governanceId,
        existingId: existing.governanceId,
        environmentLabel: connector.environmentLabel,
      },
    );
  }
  if (!existing && options.replaceId !== undefined) {
    throw notFound(
      'replace_target_not_found',
      `No table named '${name}' exists in ${connector.environmentLabel} to replace; drop --replace to register it.`,
      { replaceId: options.replaceId, name, environmentLabel: connector.environmentLabel },
    );
  }
}

/** What a promotion that writes would refuse, checked without writing (--dry-run). */
async function checkLanding(
  ctx: AppContext,
  caller: Caller,
  definition: DefinitionInput,
  existing: TableRow | null,
  name: string,
  connector: ConnectorRow,
  options: LandOptions,
): Promise<void> {
  // A preview over a table already there without --replace shows the diff (what --replace would do).
  if (options.replaceId !== undefined) checkTarget(existing, name, connector, options);
  if (existing) {
    const refusal = replaceRefusal(caller, existing);
    if (refusal) throw refusal;
  }
  await prepareDefinition(ctx, caller, definition);
}

async function targetOf(
  q: Queryable,
  caller: Caller,
  name: string,
  connector: ConnectorRow,
): Promise<TableRow | null> {
  const [row] = await q.query<Parameters<typeof toTableRow>[0]>(
    `SELECT ${TABLE_COLUMNS} FROM gds.tables
      WHERE workspace_id = $1 AND active AND lower(name) = lower($2) AND environment_label = $3 AND mode = 'MODE_A'`,
    [caller.workspaceId, name, connector.environmentLabel],
  );
  return row ? toTableRow(row) : null;
}

/**
 * The bundle's gate1.yml (unless the table holds the same rules) and contract, on the landed table; the move of
 * its contract revision, when the contract landed changed it.
 */
async function landRules(
  ctx: AppContext,
  tx: Queryable,
  caller: Caller,
  tableId: string,
  bundle: BundleBody,
): Promise<ContractVersionMove | undefined> {
  const gate1 = await currentGate1(tx, tableId);
  if (bundle.gate1 && !(gate1 && sameGateRules(yaml, gate1.content, bundle.gate1.content))) {
    // Through the lifecycle as gate apply: a target left CERTIFIED (its definition unchanged) gets a
    // recertification request for its new rules.
    await storeGate1Rules(tx, {
      table: await loadTable(tx, caller.workspaceId, tableId, { lock: true }),
      content: bundle.gate1.content,
      caller,
      clock: ctx.clock,
    });
  }
  if (bundle.contract) {
    const [table] = await tx.query<{ grain: string | null; grain_key_columns: string[] | null }>(
      'SELECT grain, grain_key_columns FROM gds.tables WHERE id = $1',
      [tableId],
    );
    await liveContract(tx, ctx.clock, {
      id: tableId,
      grain: table?.grain ?? null,
      grainKeyColumns: table?.grain_key_columns ?? null,
    });
    return (await updateContract(tx, ctx.clock, tableId, bundle.contract, caller.userId)).contractVersion;
  }
  return undefined;
}

/**
 * The unified diff from what the target table holds (nothing, when there is none) to what landing
 * the bundle would leave: its definition on `connector`, gate1.yml (semantically) and contract.
 */
async function landingDiff(
  q: Queryable,
  existing: TableRow | null,
  connector: ConnectorRow,
  bundle: BundleBody,
  artifact: BundleArtifact,
  source: string,
): Promise<string> {
  const rendered = await parseArtifact({
    fileName: artifact.filename,
    content: artifact.content,
    kind: artifact.mimeType,
  });
  if (!rendered.ok)
    throw new Error(`promotion: the rendered artifact does not parse: ${rendered.error.message}`);
  const after = {
    connectorId: connector.id,
    definition: definitionSummary(rendered.artifact, source),
    gate1: bundle.gate1 ? normaliseGateYaml(yaml, { name: 'gate1.yml', text: bundle.gate1.content }) : null,
    contract: bundle.contract ? fieldsOf(bundle.contract) : null,
  };
  const before = existing
    ? await (async () => {
        const gate1 = await currentGate1(q, existing.id);
        const contract = await findContract(q, existing.id);
        return {
          connectorId: existing.connectorId,
          definition: heldDefinition(existing),
          gate1: gate1 ? normaliseGateYaml(yaml, { name: 'gate1.yml', text: gate1.content }) : null,
          // A bundle without gate1.yml or contract leaves the target's as they are.
          ...(after.contract === null
            ? { contract: null }
            : { contract: contract ? fieldsOf(contract) : null }),
        };
      })()
    : null;
  if (before && after.gate1 === null) after.gate1 = before.gate1;
  const text = (value: object | null) => (value === null ? '' : yaml.stringify(value, { lineWidth: 0 }));
  return unifiedDiff(
    diff,
    {
      name: existing ? `${existing.governanceId}@${connector.environmentLabel}` : '(new)',
      text: text(before),
    },
    { name: `${bundle.table.name}@${bundle.table.environmentLabel}`, text: text(after) },
  );
}

/** Where a table's promotion to an environment would land, and who already holds that (Schema 'HeldPromotion'). */
export interface PromotionTarget {
  to: string;
  name: string;
  source: string | null;
  takenBy: { kind: 'name' | 'source'; id: string | null } | null;
}

/**
 * For each Mode A table of `tables` with a source, in another environment than `to`: the name and source its
 * promotion to `to` would take (the name promotedName gives, the source on `to`'s first active connector, as
 * targetConnector picks it) and the active table holding either, which landBundle's registration refuses (409).
 * One statement for a page of tables. A holder outside the caller's environments is not identified.
 */
export async function promotionTargets(
  q: Queryable,
  caller: Caller,
  to: string,
  tables: ReadonlyArray<Pick<TableRow, 'id' | 'name' | 'mode' | 'source' | 'environmentLabel'>>,
): Promise<Map<string, PromotionTarget>> {
  const promoted = tables.filter(
    (t) => t.mode === 'MODE_A' && t.source !== null && t.environmentLabel !== to,
  );
  if (promoted.length === 0) return new Map();
  const [connector] = await q.query<{ warehouse_schema: string }>(
    `SELECT warehouse_schema FROM gds.connectors WHERE workspace_id = $1 AND environment_label = $2
        AND status = 'ACTIVE' ORDER BY created_at, id LIMIT 1`,
    [caller.workspaceId, to],
  );
  const targets = promoted.map((table) => ({
    id: table.id,
    name: promotedName(table.name, table.environmentLabel, to),
    source:
      connector === undefined ? null : `${connector.warehouse_schema}.${splitSource(table.source ?? '')[1]}`,
  }));
  // Three lookups a page, each by its own index (a name, a slug, a source's object), not one lookup of either:
  // an OR over them is no index condition, and a page of 500 read the workspace's every table 500 times.
  const lookup = (condition: string, byName: boolean) =>
    `SELECT wanted.i, held.id, held.environment_label, ${byName} AS by_name FROM wanted
       CROSS JOIN LATERAL (SELECT id, environment_label FROM gds.tables
                            WHERE workspace_id = $1 AND active AND ${condition} LIMIT 1) AS held`;
  const held = await q.query<{ i: string; id: string; environment_label: string; by_name: boolean }>(
    `WITH wanted AS (SELECT * FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS w(name, slug, source, i))
     ${lookup(
       `lower(name) = ANY(ARRAY[lower(wanted.name), normalize(lower(wanted.name), NFC), normalize(lower(wanted.name), NFD)])`,
       true,
     )}
     UNION ALL ${lookup('slug = wanted.slug', true)}
     UNION ALL ${lookup(
       `mode = 'MODE_A' AND lower(split_part(source, '.', 2)) = lower(split_part(wanted.source, '.', 2)) AND source = wanted.source`,
       false,
     )}`,
    [
      caller.workspaceId,
      targets.map((t) => t.name),
      targets.map((t) => slugOf(t.name)),
      targets.map((t) => t.source),
    ],
  );
  // A name's holder first: what the registration's 409 names.
  const takers = new Map<number, (typeof held)[number]>();
  for (const row of held) {
    const i = Number(row.i) - 1;
    if (!takers.has(i) || (row.by_name && takers.get(i)?.by_name === false)) takers.set(i, row);
  }
  return new Map(
    targets.map((target, i) => {
      const taker = takers.get(i);
      return [
        target.id,
        {
          to,
          name: target.name,
          source: target.source,
          takenBy:
            taker === undefined
              ? null
              : {
                  kind: taker.by_name ? 'name' : 'source',
                  id: inEnvironmentScope(caller, taker.environment_label) ? taker.id : null,
                },
        },
      ];
    }),
  );
}
