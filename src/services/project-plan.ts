// `gds plan --dbt DIR`: a dbt project (read by src/services/dbt-project.ts) compared with what the service
// holds in the connector's environment, table by table: + create, ~ replace (definition, gate1.yml and
// contract diffs), = unchanged, - gone, ! refused. It only reads, in a handful of requests whatever the
// project's size: the connectors, the warehouse's objects, the paged bulk read of every table the
// environment holds with its definition, gate1.yml and contract (`GET /api/held-tables`, read while the
// warehouse is), and, for the models no table there holds yet, who holds their names elsewhere
// (`GET /api/tables?name=…`; a holder in the environment itself, registered since, has it read again). A
// change the caller may not write (the service says so of each table) is `! refused`, never a change apply
// would fail. The comparisons are the ones `push --replace --dry-run`, `gate apply --dry-run` and `contract
// set-intent --dry-run` make, so `apply` writes exactly what the plan shows and a second plan after it is
// all `= unchanged`. A selected node gds governs nothing of (an ephemeral model: dbt
// builds no relation for it) is `# skipped`, with the reason; it refuses nothing and holds nothing back.
// With `submit` (plan --submit, apply --submit), a table of this project that nothing else changes, QUARANTINED
// and never submitted as it is (registered or changed since its last submission: a run killed between its
// writes and its submissions leaves such tables) is `^ submit`: apply submits it for review. So is one
// PENDING_REVIEW whose submission's proof went stale (a rebuild signalled, or its contract changed, since:
// certify is blocked until it is submitted again). One a steward rejected as it is stays `= unchanged` (saying so), and one CERTIFIED (or
// beyond) is never submitted again: a CERTIFIED table whose change leaves it CERTIFIED (its gate1.yml or
// contract intent) says so.
//
// Which tables are the project's: the service records the project that registered each table (`project`, set
// by `apply`). The project's id is gds.yml's `project:`, else dbt's `name:` with the connector its tables live
// behind (with --env and no connector, the connectors whose schemas hold its sources, as the service picks
// each table's): two unrelated projects that share a tutorial's `name:` on two connectors never share an id,
// and a derived id owns only tables on those connectors, in the schemas the project's models are built into
// (two such projects on one connector, each in its own schema, share it: the other's tables are `! owned
// elsewhere` or left alone, never gone, and a warning tells what to write in gds.yml). Each matched table is
// this project's, another project's, or registered by hand; only this project's are `~ replace` or `- gone`,
// the others `! owned elsewhere` unless --adopt names them. A table recorded under an id an earlier gds derived for this name
// (`<name>@<environment>` with --env, or `<name>@<connector>`), on a connector of this project, is this
// project's, and apply records the current id on it once. A table with no project is never this project's,
// whatever its file name: `dbt--<name>--<table>.json` is also what anyone pushing such a file gets, so one of
// those with no model is not `- gone` but named in a warning with the --adopt that makes it so. A table of
// this project with no model in the whole project is `- gone` (a model left out by --select/--exclude or
// gds.yml's select still exists: its table is not gone).
import { CliError, ExitCode } from '../core/errors.js';
import type { Connector } from '../client/areas/connectors.js';
import type { Schema } from '../contract/types.js';
import type { ContractIntentRequest } from '../client/areas/contracts.js';
import type { HeldLeft, HeldOptions, HeldQuery, HeldTable, TableListRow } from '../client/areas/tables.js';
import { ApiError } from '../client/errors.js';
import type {
  DbtDeclaration,
  DbtProject,
  DeclaredArtifact,
  MappedTest,
  NotMappedTest,
} from '../core/dbt/types.js';
import type { LocalArtifact } from './artifacts.js';
import { definitionDiff, isHeld } from './artifacts.js';
import { connectorLines, findConnector } from './connector-ref.js';
import { mapBounded } from './map-bounded.js';
import { topTierCompilerWanted } from '../io/young-generation.js';
import type {
  Ownership,
  PlanAction,
  PlanClient,
  PlannedChanges,
  PlannedTable,
  ProjectPlan,
  Seen,
  TableWork,
} from './project-plan-types.js';
import { warehouseColumns, inWarehouseCase } from './warehouse-case.js';
import { checkGateLocally, gateDiff } from './gates.js';
import { intentDiff, intentRequest, intentText } from './contract-intent.js';
import { readWarehouseSources, withCheckableReferences } from './project-sources.js';
import { certifiedNotSubmitted } from './project-apply.js';
import { reportPlanned } from './project-report.js';
import { formatSourceRef, isBareIdentifier, parseSourceRef } from '../core/artifacts/identifiers.js';
import {
  definitionSummary,
  formatArtifactError,
  parseArtifact,
  parseWrittenJson,
  resolveSource,
} from '../core/artifacts/index.js';
import { changedArtifact, writtenValue } from '../core/dbt/declared-artifact.js';
import { slugOf } from '../core/table-slug.js';
import { promotedName } from '../core/promoted-name.js';
import { nodeSelector } from '../core/dbt/node-selector.js';
import { loadGateDiffLibraries, unifiedDiff } from '../core/gate-diff.js';
import { longerThan } from '../core/text-bounds.js';
import { shellWord } from '../core/shell-word.js';
import { lines, onOneLine } from '../core/terminal-text.js';

/** What the service holds of `held`, as a saved plan records it. */
export function seenOf(held: HeldTable): Seen {
  return {
    definitionVersion: held.definition.definitionVersion,
    gate1Version: held.gate1?.version ?? 0,
    contractRevision: held.contract?.contract.revision ?? 0,
    project: held.project,
  };
}

export interface PlanOptions {
  connectorId?: string | undefined;
  /** The environment whose connector to use when no connector is named. */
  env?: string | undefined;
  /** The warehouse schema of every source, instead of the one dbt wrote. */
  schema?: string | undefined;
  /** The project's id (gds.yml's `project:`); default: dbt's name with the connector. */
  project?: string | undefined;
  /** Tables owned elsewhere to take over (--adopt, by table name). */
  adopt?: string[] | undefined;
  /**
   * Plan as apply --submit: a table of this project that nothing else changes, QUARANTINED and never submitted
   * as it is, or PENDING_REVIEW with a stale proof (`staleSubmission`), is `submit`.
   */
  submit?: boolean | undefined;
  /** Tables compared at a time (default 8). */
  concurrency?: number;
  signal?: AbortSignal;
}

/**
 * The project id when gds.yml names none: dbt's name with the connector, or with --env and no connector the
 * connectors its tables live behind (`shop@con_a+con_b`), else (none known) the environment.
 */
export function derivedProjectId(
  projectName: string,
  connector: { id: string | null; environmentLabel: string },
  projectConnectors: ReadonlySet<string> = new Set(),
) {
  const connectors = connector.id === null ? [...projectConnectors].sort().join('+') : connector.id;
  return `${projectName}@${connectors === '' ? connector.environmentLabel : connectors}`;
}

/**
 * Whether `owner` is an id gds derived for a project of this name on `connectorId` before: with --env (the
 * environment, as gds derived it before it named the connectors), or with connectors among them this one.
 */
function derivedBefore(
  owner: string,
  projectName: string,
  environmentLabel: string,
  connectorId: string,
): boolean {
  const place = placeOf(owner, projectName);
  return place !== undefined && (place === environmentLabel || place.split('+').includes(connectorId));
}

/** Whether a derived id `owner` of a project of this name names one of `connectors`. */
function namesAnyOf(
  owner: string,
  projectName: string,
  connectors: ReadonlySet<string> | undefined,
): boolean {
  const place = placeOf(owner, projectName);
  return place !== undefined && connectors !== undefined && place.split('+').some((id) => connectors.has(id));
}

/** What follows `<projectName>@` in a derived id (an environment, or connectors joined by `+`). */
function placeOf(owner: string, projectName: string): string | undefined {
  const prefix = `${projectName}@`;
  return owner.startsWith(prefix) ? owner.slice(prefix.length) : undefined;
}

/**
 * The connectors the project's tables live behind: the plan's one; with --env and no connector, those whose
 * warehouse schema holds a source of the project (read from their objects, and from the environment's tables:
 * the service registers a table on a connector reading its source's schema); undefined when none is known.
 */
async function connectorsOfProject(
  client: PlanClient,
  connectors: readonly Connector[],
  connector: { id: string | null; environmentLabel: string },
  schemas: ReadonlySet<string>,
  inEnv: readonly HeldTable[],
  call: { signal?: AbortSignal },
): Promise<Set<string> | undefined> {
  if (connector.id !== null) return new Set([connector.id]);
  const found = new Set<string>();
  const inEnvironment = connectors.filter((c) => c.environmentLabel === connector.environmentLabel);
  const reads = await Promise.all(
    inEnvironment.map((c) => client.connectors.objects(c.id, call).catch(() => undefined)),
  );
  for (const read of reads)
    if (read !== undefined && schemas.has(lower(read.schema))) found.add(read.connectorId);
  for (const row of inEnv)
    if (row.connectorId && row.source && schemas.has(schemaOfSource(row.source))) found.add(row.connectorId);
  return found.size === 0 ? undefined : found;
}

/** The prefix of the artifact file names a project's tables are registered under. */
export function projectFilePrefix(projectName: string): string {
  return `dbt--${projectName}--`;
}

function projectNameOf(project: DbtProject): string {
  const name = (project.projectName ?? 'dbt').replace(/[^A-Za-z0-9_]+/g, '_');
  return name === '' ? 'dbt' : name;
}

/**
 * The connector the project's tables live behind: the named one, else the only one (of --env); with --env and
 * several connectors there, none (null): the service picks each table's by the schema of its source.
 */
export function chooseConnector(
  connectors: Connector[],
  options: Pick<PlanOptions, 'connectorId' | 'env'>,
): Connector | { id: null; environmentLabel: string } {
  const list = connectorLines(connectors);
  const env = options.env;
  if (options.connectorId !== undefined) {
    const named = findConnector(connectors, options.connectorId);
    // --env with a connector of another environment (--connector, or gds.yml's connector: where environments:
    // names no entry for it): never planned, nor applied, in the connector's environment instead of --env's.
    if (env !== undefined && named.environmentLabel !== env)
      throw new CliError(
        `--env ${env}, but connector ${onOneLine(named.name)} (${named.id}) is in ${onOneLine(named.environmentLabel)}.`,
        {
          exitCode: ExitCode.Usage,
          code: 'connector_environment_mismatch',
          suggestion: lines`Name a connector of ${env} (--connector, or in gds.yml: environments: {${env}: {connector: …}}), or leave --env out to plan in ${named.environmentLabel}. Connectors:\n${list}`,
          details: { env, connector: named.id, connectorEnvironment: named.environmentLabel },
        },
      );
    return named;
  }
  const candidates = env === undefined ? connectors : connectors.filter((c) => c.environmentLabel === env);
  const [only] = candidates;
  if (only !== undefined && candidates.length === 1) return only;
  if (env !== undefined && candidates.length > 1) return { id: null, environmentLabel: env };
  throw new CliError(
    candidates.length === 0
      ? `No connector${env === undefined ? '' : ` in ${env}`} to plan against.`
      : `Which connector do the project's tables live behind? ${candidates.length} could${env === undefined ? '' : ` in ${env}`}.`,
    {
      exitCode: ExitCode.Usage,
      code: 'connector_required',
      suggestion: lines`Pass --connector <id or name> (or --env <label>, each table then on the connector whose schema holds it), or write connector: in gds.yml beside dbt_project.yml. Connectors:\n${list}`,
    },
  );
}

const noChanges: PlannedChanges = { definition: false, gate1: false, contract: false };

/**
 * The intent to send for a model whose table the service holds: a model with no grain key (its unique test
 * removed) clears the structured grain the table's contract still holds (grainType null, no key columns), as
 * dbt no longer checks those columns' values are distinct; the other fields carry forward as ever.
 */
function withoutGrain(
  intent: ContractIntentRequest | undefined,
  row: HeldTable | undefined,
): { intent?: ContractIntentRequest } {
  const held = row?.contract?.contract;
  if (intent?.grainType !== undefined || held === undefined) return intent === undefined ? {} : { intent };
  if (held.grainType === null && held.grainKeyColumns.length === 0)
    return intent === undefined ? {} : { intent };
  return { intent: { ...intent, grainType: null, grainKeyColumns: [] } };
}

/** The contract intent of a declaration as the PATCH body; a grain key alone is ONE_PER_ENTITY. */
async function intentOf(declaration: DbtDeclaration): Promise<ContractIntentRequest | undefined> {
  const contract = declaration.contract;
  if (contract === undefined) return undefined;
  const keys = contract.grainKeyColumns ?? [];
  const input = {
    ...(contract.intent === undefined ? {} : { intent: contract.intent }),
    ...(contract.allowedConsumers === undefined
      ? {}
      : { allowedConsumers: contract.allowedConsumers.join(',') }),
    ...(keys.length === 0
      ? {}
      : { grainType: contract.grainType ?? 'ONE_PER_ENTITY', grainKey: keys.join(',') }),
    ...(contract.grain === undefined ? {} : { grain: contract.grain }),
    ...(contract.meaning === undefined ? {} : { meaning: contract.meaning }),
  };
  if (Object.keys(input).length === 0) return undefined;
  try {
    return intentRequest(input);
  } catch (error) {
    if (error instanceof CliError) throw new Error(`meta.gds: ${error.message}`, { cause: error });
    throw error;
  }
}

/**
 * The JSON artifact with every name of the project's schemas moved to `schema` (--schema): its source, and
 * the references of its columns to the project's other relations.
 */
function inSchema(
  declaration: DbtDeclaration,
  schema: string,
  dbtSchemas: ReadonlySet<string>,
): DeclaredArtifact {
  return changedArtifact(declaration.artifact, (artifact) => {
    // A table part PostgreSQL would not read bare (an alias `stg-orders`) is quoted, as dbt's reader writes it.
    const table = declaration.source.table;
    artifact['source'] = `${schema}.${isBareIdentifier(table) ? table : `"${table.replaceAll('"', '""')}"`}`;
    const columns = artifact['columns'];
    if (!Array.isArray(columns)) return artifact;
    artifact['columns'] = columns.map((column: { references?: unknown }) => {
      if (typeof column.references !== 'string') return column;
      const parts = column.references.split('.');
      return parts.length === 3 && dbtSchemas.has(lower(parts[0]))
        ? { ...column, references: [schema, ...parts.slice(1)].join('.') }
        : column;
    });
    return artifact;
  });
}

/**
 * The artifact of a declaration as `push` would send it, under the project's file name, for the table named
 * `tableName` (the model's name but for a promoted table's). It is read from the value the declaration's JSON
 * was written from, not from the text (parseWrittenJson: the same checks).
 */
async function artifactOf(
  declaration: DbtDeclaration,
  projectName: string,
  schema: string | undefined,
  dbtSchemas: ReadonlySet<string>,
  tableName = declaration.name,
): Promise<LocalArtifact> {
  const filename = `${projectFilePrefix(projectName)}${declaration.name}.json`;
  const inPlace = schema === undefined ? declaration.artifact : inSchema(declaration, schema, dbtSchemas);
  const declared =
    tableName === declaration.name
      ? inPlace
      : changedArtifact(inPlace, (artifact) => ({ ...artifact, table: tableName }));
  const { content } = declared;
  const value = writtenValue(declared);
  const parsed =
    value === undefined
      ? await parseArtifact({ fileName: filename, content })
      : await parseWrittenJson({ fileName: filename, content }, value);
  if (!parsed.ok) throw new Error(formatArtifactError(filename, parsed.error));
  const resolved = resolveSource(parsed.artifact, undefined);
  if (!resolved.ok) throw new Error(resolved.error.message);
  const source = `${resolved.source.schema}.${resolved.source.table}`;
  return {
    filename,
    content,
    mimeType: 'json',
    table: parsed.artifact.table,
    source,
    declared: definitionSummary(parsed.artifact, source),
  };
}

function refused(
  declaration: Pick<DbtDeclaration, 'name' | 'uniqueId' | 'resourceType' | 'notMappedTests'> & {
    mappedTests?: MappedTest[];
    source?: string | null;
  },
  reason: string,
  tableId: string | null = null,
  action: 'refused' | 'skipped' = 'refused',
): PlannedTable {
  return {
    table: declaration.name,
    source: declaration.source ?? null,
    action,
    tableId,
    uniqueId: declaration.uniqueId,
    resourceType: declaration.resourceType,
    mappedTests: declaration.mappedTests ?? [],
    notMappedTests: declaration.notMappedTests,
    changes: noChanges,
    diffs: {},
    reason,
  };
}

const lower = (s: string | null | undefined) => (s ?? '').toLowerCase();

/** The schema of a `schema.table` source, lower case (a quoted one unquoted). */
function schemaOfSource(source: string): string {
  return lower(parseSourceRef(source)?.schema ?? source.slice(0, Math.max(0, source.indexOf('.'))));
}

/**
 * The name of a model's table in environment `env`: the model's, unless `bySource` (the table of `env` its source
 * matches) is the model's table promoted there from another of `environments` (`gds env promote` lands
 * `customers` of dev as `customers_production`, a table name being one per workspace), which keeps that name.
 */
function tableNameOf(
  name: string,
  bySource: HeldTable | undefined,
  env: string,
  environments: ReadonlySet<string>,
): string {
  if (bySource === undefined || lower(bySource.name) === lower(name)) return name;
  for (const from of environments)
    if (from !== env && lower(promotedName(name, from, env)) === lower(bySource.name)) return bySource.name;
  return name;
}

/** The environment's tables by source and by name (lower case). */
function indexed(rows: HeldTable[]) {
  const bySource = new Map<string, HeldTable>();
  const byName = new Map<string, HeldTable>();
  for (const row of rows) {
    if (row.source) bySource.set(lower(row.source), row);
    byName.set(lower(row.name), row);
  }
  return { bySource, byName };
}

/** What a plan read of the environment: `left`, what a narrowed read left out (undefined: it read it all). */
interface HeldRead {
  tables: HeldTable[];
  left?: HeldLeft;
}

/** The environment's tables `filter` narrows to, or all of them from a service that cannot narrow a read. */
async function readOwned(
  client: PlanClient,
  env: string,
  filter: HeldQuery,
  call: HeldOptions,
): Promise<HeldRead> {
  return (
    (await client.tables.heldMatching(env, filter, call)) ?? { tables: await client.tables.held(env, call) }
  );
}

/** Whether a held read narrowed by `filter` (its projects and file prefix) takes in `row`, as the service reads. */
function takenIn(filter: HeldQuery, row: HeldTable): boolean {
  const project = row.project ?? null;
  if (project !== null)
    return (
      (filter.projects ?? []).includes(project) ||
      (filter.projectPrefix !== undefined && project.startsWith(filter.projectPrefix))
    );
  const file = (row.artifactFile ?? '').toLowerCase();
  return filter.filePrefix !== undefined && file.startsWith(filter.filePrefix.toLowerCase());
}

/**
 * `read` (of the tables `filter` takes in) with the tables of the environment whose name, slug or source's
 * object is one of `names`: those it had left out are counted off its `left`. Not one `filter` takes in: it
 * was registered since the read (another run of the project), and never counted among those left out.
 */
async function alsoHeld(
  client: PlanClient,
  env: string,
  read: Required<HeldRead>,
  filter: HeldQuery,
  names: string[],
  call: HeldOptions,
): Promise<Required<HeldRead>> {
  const found = await client.tables.heldMatching(env, { names }, call);
  if (found === undefined) return { tables: await client.tables.held(env, call), left: read.left };
  const tables = new Map(read.tables.map((row) => [row.id, row]));
  let { otherProjects, byHand } = read.left;
  for (const row of found.tables) {
    if (!tables.has(row.id) && row.mode === 'MODE_A' && !takenIn(filter, row)) {
      if ((row.project ?? null) === null) byHand -= 1;
      else otherProjects -= 1;
    }
    tables.set(row.id, row);
  }
  return { tables: [...tables.values()], left: { otherProjects, byHand } };
}

/** The client, reading each connector's warehouse objects once (the sources check and the column case both need them). */
export function withObjectsReadOnce(client: PlanClient): PlanClient {
  const reads = new Map<string, ReturnType<PlanClient['connectors']['objects']>>();
  const objects: PlanClient['connectors']['objects'] = (connectorId, options) => {
    const read = reads.get(connectorId) ?? client.connectors.objects(connectorId, options);
    reads.set(connectorId, read);
    return read;
  };
  return { ...client, connectors: { ...client.connectors, objects } };
}

/** Compares the project with the service. Sends nothing but reads. */
export async function planProject(
  client: PlanClient,
  project: DbtProject,
  options: PlanOptions = {},
): Promise<ProjectPlan> {
  const call = options.signal === undefined ? {} : { signal: options.signal };
  // Which submissions are stale is asked only by a plan of submissions (--submit).
  const heldCall: HeldOptions = { ...call, ...(options.submit === true ? {} : { staleSubmission: false }) };
  client = withObjectsReadOnce(client);
  const projectName = projectNameOf(project);
  const selectorOf = project.selectorOf ?? nodeSelector;
  const connectors = await client.connectors.list(call);
  const connector = chooseConnector(connectors, options);
  const env = connector.environmentLabel;
  const environments = new Set(connectors.map((c) => c.environmentLabel));
  // Everything compared, read while the warehouse is: the tables this project may own (its id's, those of ids
  // an earlier gds derived for its name, and those registered by hand under its file name), in a few paged
  // requests however large the environment; the whole environment from a service that cannot narrow it.
  const prefix = projectFilePrefix(projectName);
  const ownFilter: HeldQuery = {
    ...(options.project === undefined ? {} : { projects: [options.project] }),
    projectPrefix: `${projectName}@`,
    filePrefix: prefix,
  };
  const held = readOwned(client, env, ownFilter, heldCall);
  held.catch(() => undefined);
  const warehouse = readWarehouseSources(client, connectors, connector, call);
  warehouse.catch(() => undefined);
  const cased = await inWarehouseCase(
    project.declarations,
    await warehouseColumns(
      client,
      connector.id === null
        ? connectors.filter((c) => c.environmentLabel === env).map((c) => c.id)
        : [connector.id],
      call,
    ),
    options.schema,
    project.adapter,
  );
  const dbtSchemas = new Set(project.declarations.map((d) => lower(d.source.schema)));
  const declarations = await withCheckableReferences(
    client,
    connectors,
    await warehouse,
    cased.declarations,
    { schema: options.schema, dbtSchemas },
    call,
  );
  // No full collection here: read a table at a time, the pages leave little garbage in the old generation,
  // and one costs a no-change plan of 2,000 models 40 ms of CPU (0.72 -> 0.68 s) for 3-4 MiB (docs/bench.md).
  let owned = await held;
  // The tables of the environment holding a model's source or name that the project does not own: a plan
  // creating nothing, each model's table this project's, asks nothing of them.
  if (owned.left !== undefined) {
    const { bySource: sources, byName: names } = indexed(owned.tables);
    const asked = new Set<string>();
    for (const d of declarations) {
      const row = sources.get(lower(`${options.schema ?? d.source.schema}.${d.source.table}`));
      if (row !== undefined && names.has(lower(tableNameOf(d.name, row, env, environments)))) continue;
      asked.add(d.name).add(d.source.table);
    }
    if (asked.size > 0)
      owned = await alsoHeld(
        client,
        env,
        { tables: owned.tables, left: owned.left },
        ownFilter,
        [...asked],
        heldCall,
      );
  }
  let inEnv = owned.tables;
  let { bySource, byName } = indexed(inEnv);
  const nameOf = (d: DbtDeclaration) =>
    tableNameOf(
      d.name,
      bySource.get(lower(`${options.schema ?? d.source.schema}.${d.source.table}`)),
      env,
      environments,
    );
  // A table name is one per workspace by its slug too (raw-source-0 is raw_source_0 to the service).
  const slugHolders = new Map<string, HeldTable | TableListRow>();
  for (const row of inEnv) slugHolders.set(slugOf(row.name), row);
  // A table name is one per workspace, whatever the environment: the models' names no table of this
  // environment holds are looked up in the others, by name (in a workspace of 100,000 tables, reading them all
  // cost a no-change plan of 2,000 models 0.5 s and 60-90 MiB), with their slugs as names (the holder of a
  // slug named otherwise, `Raw Source 0`, is not found so: its registration is then refused); a plan creating
  // nothing asks nothing.
  const unheld = new Set<string>();
  for (const name of declarations.map(nameOf)) {
    if (!byName.has(lower(name))) unheld.add(lower(name));
    if (slugOf(name) !== lower(name) && !slugHolders.has(slugOf(name))) unheld.add(slugOf(name));
  }
  const holders = unheld.size === 0 ? [] : await client.tables.named([...unheld], call);
  // A holder in this environment was registered since it was read (another run of this project, started a
  // moment before): the environment is read again, so that such a table is compared as the model's (or owned
  // elsewhere), never a name held.
  if (holders.some((row) => row.environmentLabel === env)) {
    owned =
      owned.left === undefined
        ? { tables: await client.tables.held(env, heldCall) }
        : await alsoHeld(
            client,
            env,
            { tables: owned.tables, left: owned.left },
            ownFilter,
            holders.filter((row) => row.environmentLabel === env).map((row) => row.name),
            heldCall,
          );
    inEnv = owned.tables;
    ({ bySource, byName } = indexed(inEnv));
    for (const row of inEnv) slugHolders.set(slugOf(row.name), row);
  }
  const nameHolders = new Map<string, HeldTable | TableListRow>(byName);
  for (const row of holders) {
    nameHolders.set(lower(row.name), row);
    slugHolders.set(slugOf(row.name), row);
  }
  const schemas = new Set(
    options.schema === undefined
      ? cased.declarations.map((d) => lower(d.source.schema))
      : [lower(options.schema)],
  );
  // The schemas the project's models are built into, selected or not. Two projects that kept one dbt name
  // (a tutorial's, dbt init's) on one connector derive one id, each in its own schema: a table recorded under a
  // derived id outside these schemas is the other one's (or this one's from before its models moved there),
  // never this plan's to replace or remove until --adopt names it. A table with no source cannot tell, nor can
  // a project read with no schema at all (no declaration, no nodeSchemas).
  const projectSchemas = new Set(
    options.schema === undefined ? [...schemas, ...(project.nodeSchemas ?? []).map(lower)] : schemas,
  );
  // The whole project's schemas, not the selection's: a --select over one schema keeps the id a full run derives.
  const projectConnectors = await connectorsOfProject(
    client,
    connectors,
    connector,
    projectSchemas,
    inEnv,
    call,
  );
  const derived = options.project === undefined;
  const projectId = options.project ?? derivedProjectId(projectName, connector, projectConnectors);
  const onProjectConnector = (row: HeldTable) =>
    projectConnectors === undefined || projectConnectors.has(row.connectorId ?? '');
  const schemasKnown = projectSchemas.size > 0 || project.nodeSchemas !== undefined;
  const inProjectSchemas = (row: HeldTable) =>
    !schemasKnown ||
    row.source === null ||
    row.source === undefined ||
    projectSchemas.has(schemaOfSource(row.source));
  // A derived id names the connectors, so it owns tables on them only, and in the project's schemas; gds.yml's
  // id is the user's, kept across a change of connector or schema, and owns exactly the tables recorded under it.
  const ownershipById = (row: HeldTable): { ownership: Ownership; migrate: boolean; namesake?: true } => {
    const owner = row.project ?? null;
    if (owner === null) return { ownership: 'hand', migrate: false };
    const current = owner === projectId && (!derived || onProjectConnector(row));
    // An id derived before on this connector: on one of the project's, or naming one of them too (the
    // project's last model on another connector left it, and the schema rule below then tells the table apart).
    const before =
      !current &&
      derived &&
      row.connectorId !== null &&
      row.connectorId !== undefined &&
      derivedBefore(owner, projectName, env, row.connectorId) &&
      (projectConnectors?.has(row.connectorId) === true || namesAnyOf(owner, projectName, projectConnectors));
    if (!current && !before) return { ownership: 'other', migrate: false };
    if (derived && !inProjectSchemas(row)) return { ownership: 'other', migrate: false, namesake: true };
    return { ownership: 'this', migrate: before };
  };
  // Registered with no project under this project's file name: by hand, or by a gds before projects were
  // recorded. The name is all there is to go by, and anyone may push a file so named: only --adopt makes one
  // this project's.
  const namedLikeOurs = (row: HeldTable) =>
    (row.project ?? null) === null &&
    lower(row.artifactFile).startsWith(lower(prefix)) &&
    onProjectConnector(row);
  // A model's table here under its promoted name (`gds env promote`) is its table too, selected or not.
  const promotedNames = (name: string) =>
    [...environments].filter((from) => from !== env).map((from) => promotedName(name, from, env));
  const withPromoted = (names: string[]) => names.flatMap((name) => [name, ...promotedNames(name)]);
  // What tells a held table this project's: built at the first held table asked about. A first plan holds none,
  // and at 5,000 models these are tens of thousands of strings, live while every table is planned.
  let keys: ProjectKeys | undefined;
  const projectKeys = (): ProjectKeys => {
    if (keys !== undefined) return keys;
    const keptNames = new Set(
      withPromoted([...project.refusals.map((r) => r.name), ...(project.nodeNames ?? [])]).map((name) =>
        lower(name),
      ),
    );
    const keptFiles = new Set(
      withPromoted(project.nodeNames ?? []).map((name) => lower(`${prefix}${name}.json`)),
    );
    // A model's table renamed by hand (`gds push --replace` with another name and file keeps its project and
    // source) is the model's by its source, selected or not: each source as the declarations' are looked up
    // (with --schema's schema), and as an artifact writes it (a part in upper case quoted).
    const keptSources = new Set<string>();
    for (const node of project.nodeSources ?? []) {
      const source = { schema: options.schema ?? node.schema, table: node.table };
      keptSources.add(lower(`${source.schema}.${source.table}`)).add(lower(formatSourceRef(source)));
    }
    const nodeNames = new Set(
      withPromoted([
        ...(project.lineage ?? []).map((node) => node.name),
        ...declarations.flatMap((d) => [d.name, nameOf(d)]),
      ]).map(lower),
    );
    const declaredSources = new Set(
      declarations.map((d) => lower(`${options.schema ?? d.source.schema}.${d.source.table}`)),
    );
    keys = { keptNames, keptFiles, keptSources, nodeNames, declaredSources };
    return keys;
  };
  // A table kept by a node of the project, selected or not: by its name (a refused model's too), file or source.
  const keptByNode = (row: HeldTable) => {
    const { keptNames, keptFiles, keptSources } = projectKeys();
    return (
      keptNames.has(lower(row.name)) ||
      keptFiles.has(lower(row.artifactFile)) ||
      keptSources.has(lower(row.source ?? ''))
    );
  };
  // Every table this derived id holds in the project's schemas and none a node of this project (no model,
  // seed or snapshot by its name, file or source, selected or not; nor an ephemeral one's name):
  // another dbt project of this name built into the same schemas on this connector holds the id (two such
  // projects derive one id, and nothing recorded tells them apart). Its tables are left alone as namesakes, and
  // this project creates none under the id (its next plan would take them for its own, gone, and --prune would
  // remove them), until gds.yml gives it an id of its own, or --adopt takes the tables over. A project's own
  // tables after every model was renamed at once look the same: --adopt (or "project:" in gds.yml) says so.
  const knownToProject = (row: HeldTable) => {
    const { nodeNames, declaredSources } = projectKeys();
    return keptByNode(row) || nodeNames.has(lower(row.name)) || declaredSources.has(lower(row.source ?? ''));
  };
  const idHolders = derived
    ? inEnv.filter((row) => row.mode !== 'MODE_B' && ownershipById(row).ownership === 'this')
    : [];
  const adopt = new Set((options.adopt ?? []).map(lower));
  // The holders of models' names that are this project's tables of other environments and that the caller may
  // promote: read before the models are planned, in a few requests however many models they refuse.
  const promotable = await landingPromotions(
    client,
    connectors,
    env,
    await promotableOf(
      client,
      holders.filter((row) =>
        ofThisProjectElsewhere(row, { id: projectId, name: projectName, derived }, env),
      ),
      env,
      call,
    ),
    call,
  );
  const heldByNamesake =
    idHolders.length > 0 && !idHolders.some(knownToProject)
      ? new Set(idHolders.map((row) => row.id))
      : new Set<string>();
  const ownershipOf = (row: HeldTable): { ownership: Ownership; migrate: boolean; namesake?: true } =>
    heldByNamesake.has(row.id) ? { ownership: 'other', migrate: false, namesake: true } : ownershipById(row);
  const namesakesLeft = idHolders.filter((row) => heldByNamesake.has(row.id) && !adopt.has(lower(row.name)));
  const adopted = new Set<string>();
  const matched = new Set<string>();
  // dbt builds two relations of one alias in two schemas; the service holds one table per name in an
  // environment, so such models would take turns replacing one table: each is refused. So are models of one
  // slug (raw_source_0, raw-source-0) while no table holds it; once one does, the model matched to it is
  // planned, and the others are refused below, naming that table.
  const declared = new Map<string, DbtDeclaration[]>();
  for (const d of declarations) declared.set(slugOf(d.name), [...(declared.get(slugOf(d.name)) ?? []), d]);
  const planned = await mapBounded(declarations, options.concurrency ?? 8, async (declaration) => {
    const sourceOf = () =>
      options.schema === undefined
        ? `${declaration.source.schema}.${declaration.source.table}`
        : `${options.schema}.${declaration.source.table}`;
    const namesakes = (declared.get(slugOf(declaration.name)) ?? []).filter(
      (d) =>
        d !== declaration &&
        (lower(d.name) === lower(declaration.name) || !slugHolders.has(slugOf(declaration.name))),
    );
    if (namesakes.length > 0)
      return refused({ ...declaration, source: sourceOf() }, namesakesReason(declaration, namesakes));
    let artifact: LocalArtifact;
    let intent: ContractIntentRequest | undefined;
    try {
      artifact = await artifactOf(declaration, projectName, options.schema, dbtSchemas);
      intent = await intentOf(declaration);
    } catch (error) {
      return refused({ ...declaration, source: sourceOf() }, (error as Error).message);
    }
    const tableName = tableNameOf(declaration.name, bySource.get(lower(artifact.source)), env, environments);
    if (tableName !== declaration.name)
      artifact = await artifactOf(declaration, projectName, options.schema, dbtSchemas, tableName);
    const row = bySource.get(lower(artifact.source)) ?? byName.get(lower(declaration.name));
    if (row !== undefined) matched.add(row.id);
    const holder = nameHolders.get(lower(tableName));
    if (holder !== undefined && holder.id !== row?.id)
      return refused(
        { ...declaration, source: artifact.source },
        `the name ${tableName} is held by table ${holder.id} ${holderText(holder)}, and a table name is one per workspace: ${promotionText(promotable.get(holder.id), holder.id, env)}give the model another alias (dbt's alias config), or leave it out with --exclude`,
        row?.id ?? null,
      );
    const slugHolder = slugHolders.get(slugOf(tableName));
    if (slugHolder !== undefined && slugHolder.id !== row?.id)
      return refused(
        { ...declaration, source: artifact.source },
        `the name ${tableName} is table ${slugHolder.name}'s ${holderText(slugHolder, slugHolder.id)} to the service, which compares table names ${SLUG_RULE} (both are ${slugOf(tableName)}): give the model another alias (dbt's alias config), or leave it out with --exclude`,
        row?.id ?? null,
      );
    if (row?.mode === 'MODE_B')
      return refused(
        { ...declaration, source: artifact.source },
        `${row.name} (${row.id}) is a Mode B table: a dbt model cannot replace it`,
        row.id,
      );
    if (row === undefined && namesakesLeft.length > 0)
      return refused(
        { ...declaration, source: artifact.source },
        `not created: ${projectId} holds ${namesakesLeft.length === 1 ? 'a table' : `${namesakesLeft.length} tables`} of no model of this project (the warning names ${namesakesLeft.length === 1 ? 'it' : 'them'}), another dbt project's named ${projectName}, or this one's before every model was renamed. Created under that id, this table and ${namesakesLeft.length === 1 ? 'that one' : 'those'} would be one project's, and a --prune of either project would remove the other's: give this project an id of its own in gds.yml, or --adopt ${namesakesLeft.length === 1 ? 'it' : 'them'} (the warning says how)`,
      );
    const gate1 =
      declaration.gate1Yaml === undefined
        ? undefined
        : { name: `${declaration.name}/gate1.yml`, text: declaration.gate1Yaml };
    const work: TableWork = {
      artifact,
      ...(gate1 === undefined ? {} : { gate1 }),
      ...withoutGrain(intent, row),
    };
    try {
      const compared =
        row === undefined
          ? await newTableDiffs(work, connector.id ?? undefined)
          : await heldTableDiffs(row, work, connector.id ?? undefined);
      const changed = compared.changes.definition || compared.changes.gate1 || compared.changes.contract;
      const owned = row === undefined ? undefined : ownershipOf(row);
      // --adopt names the table the service holds: over the model's relation, it may hold another name (a
      // table another team registered by hand over it), which --adopt of the model's name never takes over.
      const heldName = row !== undefined && lower(row.name) !== lower(tableName) ? row.name : undefined;
      const adopting = owned !== undefined && owned.ownership !== 'this' && adopt.has(lower(row?.name));
      if (adopting) adopted.add(lower(row?.name));
      const elsewhere = owned !== undefined && owned.ownership !== 'this' && !adopting;
      const forbidden =
        row === undefined || elsewhere
          ? undefined
          : forbiddenChange(
              row,
              compared.changes,
              () => selectorOf(declaration.uniqueId) ?? declaration.name,
            );
      if (forbidden !== undefined && row !== undefined)
        return {
          ...refused({ ...declaration, name: tableName, source: artifact.source }, forbidden, row.id),
          diffs: compared.diffs,
        };
      const submission =
        options.submit !== true || row === undefined || elsewhere || changed
          ? undefined
          : row.state === 'QUARANTINED'
            ? await lastSubmission(client, row, call)
            : row.state === 'PENDING_REVIEW' && row.staleSubmission === true
              ? { submit: true, reason: STALE_SUBMISSION, stale: true as const }
              : undefined;
      const action: PlanAction =
        row === undefined
          ? 'create'
          : elsewhere
            ? 'owned-elsewhere'
            : changed
              ? 'replace'
              : submission?.submit === true
                ? 'submit'
                : 'unchanged';
      return {
        table: tableName,
        source: artifact.source,
        action,
        tableId: row?.id ?? null,
        uniqueId: declaration.uniqueId,
        resourceType: declaration.resourceType,
        mappedTests: declaration.mappedTests,
        notMappedTests: declaration.notMappedTests,
        ...(declaration.rules === undefined ? {} : { rules: declaration.rules }),
        ...(action === 'owned-elsewhere' ? { selector: selectorOf(declaration.uniqueId) ?? tableName } : {}),
        ...(action === 'owned-elsewhere' && heldName !== undefined ? { heldName } : {}),
        changes: compared.changes,
        diffs: compared.diffs,
        ...(row === undefined || owned === undefined
          ? {}
          : { ownership: owned.ownership, owner: row.project ?? null }),
        ...(elsewhere && row !== undefined
          ? {
              reason:
                owned?.namesake === true
                  ? namesakeReason(row, row.name, projectName, projectSchemas)
                  : ownedElsewhereReason(row, tableName, prefix),
            }
          : {}),
        ...(submission === undefined ? {} : { reason: submission.reason }),
        ...(submission !== undefined && 'stale' in submission ? { staleSubmission: true as const } : {}),
        ...(options.submit === true &&
        row?.state === 'CERTIFIED' &&
        !elsewhere &&
        keepsCertified(compared.changes)
          ? { reason: certifiedNotSubmitted(tableName) }
          : {}),
        ...(adopting && row !== undefined ? { adopt: { from: row.project ?? null } } : {}),
        ...(owned?.migrate === true ? { migrate: true } : {}),
        ...(row === undefined ? {} : { seen: seenOf(row) }),
        work,
      } satisfies PlannedTable;
    } catch (error) {
      if (error instanceof CliError && error.exitCode === ExitCode.Usage)
        return refused(
          { ...declaration, name: tableName, source: artifact.source },
          error.message,
          row?.id ?? null,
        );
      throw error;
    }
  });
  const refusals = [
    ...project.refusals.map((r) => refused(r, r.reason)),
    ...(project.skipped ?? []).map((r) => refused(r, r.reason, null, 'skipped')),
  ];
  const modelLess = inEnv.filter((row) => !matched.has(row.id) && !keptByNode(row));
  const unclaimed = modelLess.filter((row) => namedLikeOurs(row) && row.mode !== 'MODE_B');
  const isNamesake = (row: HeldTable) => row.mode !== 'MODE_B' && ownershipOf(row).namesake === true;
  for (const row of [...unclaimed, ...modelLess.filter(isNamesake)])
    if (adopt.has(lower(row.name))) adopted.add(lower(row.name));
  const unknownAdopt = (options.adopt ?? []).filter((name) => !adopted.has(lower(name)));
  if (unknownAdopt.length > 0)
    throw new CliError(
      `--adopt ${unknownAdopt.join(', ')}: no table of this plan owned elsewhere has that name.`,
      {
        exitCode: ExitCode.Usage,
        code: 'nothing_to_adopt',
        suggestion:
          'gds plan marks the tables you may adopt with "! owned elsewhere", and names in a warning the ones with no model that have this project\'s file name but no project, or its derived id in a schema none of its models is built into; pass --adopt with one of their names.',
      },
    );
  const gone: PlannedTable[] = modelLess
    .filter(
      (row) =>
        ownershipOf(row).ownership === 'this' ||
        ((namedLikeOurs(row) || isNamesake(row)) && adopt.has(lower(row.name))),
    )
    .map((row) => {
      const { ownership, migrate } = ownershipOf(row);
      return {
        table: row.name,
        source: row.source ?? null,
        action: 'gone',
        tableId: row.id,
        uniqueId: null,
        resourceType: null,
        mappedTests: [],
        notMappedTests: [],
        changes: noChanges,
        diffs: {},
        ownership,
        owner: row.project ?? null,
        ...(ownership === 'this' ? {} : { adopt: { from: row.project ?? null } }),
        ...(migrate ? { migrate: true } : {}),
        seen: seenOf(row),
      };
    });
  const leftUnclaimed = unclaimed.filter((row) => !adopt.has(lower(row.name))).map((row) => row.name);
  const unclaimedWarning = leftUnclaimed.length === 0 ? [] : [unclaimedText(leftUnclaimed, env, prefix)];
  const namesakes = inEnv.filter(
    (row) => isNamesake(row) && !adopt.has(lower(row.name)) && !heldByNamesake.has(row.id),
  );
  const idHeldWarning =
    namesakesLeft.length === 0
      ? []
      : [
          namesakeText(namesakesLeft, {
            env,
            projectId,
            projectName,
            projectSchemas,
            declaredSchemas: schemas,
            ownTables: 0,
            noModel: true,
          }),
        ];
  const namesakeWarning =
    namesakes.length === 0
      ? []
      : [
          namesakeText(namesakes, {
            env,
            projectId,
            projectName,
            projectSchemas,
            declaredSchemas: schemas,
            ownTables: inEnv.filter((row) => ownershipOf(row).ownership === 'this').length,
          }),
        ];
  const goneIds = new Set(gone.map((t) => t.tableId));
  // The environment's tables not read (none from a service that cannot narrow the read) are left alone too.
  const untouched = { ...(owned.left ?? { otherProjects: 0, byHand: 0 }) };
  for (const row of inEnv) {
    if (matched.has(row.id) || goneIds.has(row.id) || row.mode === 'MODE_B') continue;
    const { ownership } = ownershipOf(row);
    if (ownership === 'other') untouched.otherProjects += 1;
    else if (ownership === 'hand') untouched.byHand += 1;
  }
  // Never while another project of this dbt name may hold the id: the line would make its tables this one's.
  const firstUse =
    options.project === undefined && !inEnv.some((row) => row.project === projectId || isNamesake(row));
  const derivedFrom =
    connector.id !== null
      ? 'the connector'
      : projectConnectors === undefined
        ? 'the environment'
        : `the connector${projectConnectors.size === 1 ? '' : 's'} of its sources' schemas`;
  const proposal = firstUse
    ? `This project's id on the service is ${projectId} (dbt's name and ${derivedFrom}). To keep it when the connector changes, write "project: ${projectId}" in gds.yml.`
    : undefined;
  const tables = [...planned, ...refusals, ...gone];
  reportPlanned(tables, {
    warehouse: await warehouse,
    rows: inEnv,
    lineage: project.lineage,
    selectorOf,
    promotedNames,
  });
  const count = (action: PlanAction) => tables.filter((t) => t.action === action).length;
  return {
    projectName,
    project: { id: projectId, from: options.project === undefined ? 'derived' : 'gds.yml' },
    untouched,
    connector: { id: connector.id, environmentLabel: env },
    tables,
    otherTests: project.otherTests,
    ...(options.submit === true ? { submit: true } : {}),
    warnings: [
      ...project.warnings,
      ...cased.notes,
      ...unclaimedWarning,
      ...namesakeWarning,
      ...idHeldWarning,
    ],
    ...(proposal === undefined ? {} : { proposal }),
    counts: {
      create: count('create'),
      replace: count('replace'),
      unchanged: count('unchanged'),
      gone: count('gone'),
      refused: count('refused'),
      ownedElsewhere: count('owned-elsewhere'),
      skipped: count('skipped'),
      submit: count('submit'),
    },
  };
}

/**
 * Why the model's table is refused when it changes what the caller may not write (the service tells, per table:
 * `mayReplace`, `maySetIntent`); undefined when the caller may write every change. `model` (the --exclude value
 * of the model) is asked only for a refusal: the project's hint index is built at its first question.
 */
function forbiddenChange(row: HeldTable, changes: PlannedChanges, model: () => string): string | undefined {
  const rules = [
    ...(changes.definition && row.definition.mayReplace === false
      ? [['definition', "only the table's owner or a workspace admin may replace its definition"]]
      : []),
    ...(changes.contract && row.contract?.maySetIntent === false
      ? [['contract intent', 'only its owner or a STEWARD and above may set its contract intent']]
      : []),
  ];
  if (rules.length === 0) return undefined;
  return `the model changes its ${rules.map(([part]) => part).join(' and ')}, which this token may not: ${rules.map(([, rule]) => rule).join('; ')}. Apply as the table's owner or a workspace admin, or leave the model out with --exclude ${model()}`;
}

const STALE_SUBMISSION =
  'PENDING_REVIEW with a stale proof (its data, definition, gate1.yml or contract moved since it was submitted, so certify is blocked): apply --submit submits it again';

/** A change apply writes that leaves a CERTIFIED table CERTIFIED (a new definition makes it QUARANTINED). */
function keepsCertified(changes: PlannedChanges): boolean {
  return !changes.definition && (changes.gate1 || changes.contract);
}

/**
 * Whether apply --submit submits a QUARANTINED table that nothing else changes: unless its latest submission
 * was of the definition, gate1.yml and contract it holds now (QUARANTINED since, a steward rejected it:
 * submitting the same again is for a person to decide, with gds gate submit). Reads its gate jobs (and that
 * submission).
 */
export async function lastSubmission(
  client: PlanClient,
  row: HeldTable,
  call: { signal?: AbortSignal },
): Promise<{ submit: boolean; reason: string }> {
  const { jobs } = await client.gateJobs.list(row.id, { limit: 100 }, call);
  const last = jobs.find((job) => job.type === 'gate1-submit');
  const proof = last === undefined ? undefined : await client.gateJobs.lookup(last.id, { gate: 1 }, call);
  const version = proof !== undefined && 'tableVersion' in proof ? proof.tableVersion : undefined;
  // The contract revision only when both sides carry it (a proof stamped before revisions were recorded, an
  // older service): a contract changed since the submission was never checked by it.
  const asHeld =
    version !== undefined &&
    version.definition === row.definition.definitionVersion &&
    version.gate1 === (row.gate1?.version ?? 0) &&
    (version.contract === undefined ||
      row.contractVersion === undefined ||
      version.contract === row.contractVersion);
  return asHeld
    ? {
        submit: false,
        reason: `QUARANTINED since it was submitted as it is (${last?.id ?? ''}; rejected): apply --submit leaves it; gds gate submit ${shellWord(row.name)} submits it again`,
      }
    : {
        submit: true,
        reason:
          'QUARANTINED and not submitted as it is: apply --submit submits it for review (PENDING_REVIEW)',
      };
}

/** How the service compares table names besides lowered: their slugs (src/core/table-slug.ts). */
const SLUG_RULE = 'lowered and with each run of other characters than letters, digits and _ made one _';

/**
 * Whether the holder is this project's table of another environment: recorded under this project's id, or (an
 * id gds derives) under the id gds derived for this dbt project there (`shop@con_dev` while production plans
 * `shop@con_prod`), which the promotion turns into this one (promotedProject, server side). Another team's dbt
 * project of the same name on the same connector has the same derived id: promotableOf tells them apart.
 */
function ofThisProjectElsewhere(
  holder: TableListRow,
  project: { id: string; name: string; derived: boolean },
  env: string,
): boolean {
  if (holder.environmentLabel === env || holder.project === null || holder.project === undefined)
    return false;
  return (
    holder.project === project.id ||
    (project.derived &&
      derivedBefore(holder.project, project.name, holder.environmentLabel, holder.connectorId ?? ''))
  );
}

/** A holder the caller could promote, with what its promotion would take where the plan is (the service's). */
type HeldPromotion = Schema<'HeldPromotion'>;
type Promotable = TableListRow & { promotion?: HeldPromotion };

/**
 * The ids of `holders` the caller could promote (its owner or a workspace admin: the service's `mayReplace` of
 * each table's definition), read as the environment's held tables narrowed to the holders' projects, a few
 * paged requests per environment rather than one per table (a project applied in dev and planned in staging
 * has every model's name held there). A holder not read (an environment out of the caller's scope, a table
 * gone) is not the caller's.
 */
async function promotableOf(
  client: PlanClient,
  holders: TableListRow[],
  env: string,
  call: { signal?: AbortSignal },
): Promise<Map<string, Promotable>> {
  const projectsByEnvironment = new Map<string, Set<string>>();
  for (const { environmentLabel, project } of holders)
    if (project !== null && project !== undefined)
      projectsByEnvironment.set(
        environmentLabel,
        (projectsByEnvironment.get(environmentLabel) ?? new Set<string>()).add(project),
      );
  const wanted = new Map(holders.map((row) => [row.id, row]));
  const promotable = new Map<string, Promotable>();
  for (const [environment, projects] of projectsByEnvironment) {
    let read: HeldRead;
    try {
      read = await readOwned(
        client,
        environment,
        { projects: [...projects] },
        { ...call, staleSubmission: false, promotedTo: env },
      );
    } catch (error) {
      if (error instanceof ApiError && (error.status === 403 || error.status === 404)) continue;
      throw error;
    }
    for (const row of read.tables) {
      const holder = wanted.get(row.id);
      if (holder !== undefined && row.definition.mayReplace === true)
        promotable.set(row.id, {
          ...holder,
          ...(row.promotion === undefined ? {} : { promotion: row.promotion }),
        });
    }
  }
  return promotable;
}

/**
 * The holders of `promotable` (each a table of another environment) whose promotion to `env` would land, each
 * with null, or, where it would not because another table holds the name or the source it would take there (the
 * service's 409), which table. The service promotes onto env's first active connector in the list's order
 * (the contract's: oldest first, then id), registering the holder's object under that connector's schema, as the
 * same object: where that object is not there (the models not built in env yet), the promotion is refused (400
 * unknown_source); where the connector reads the holder's own schema (two environments' connectors on one
 * schema), it would take again the source the holder holds, and is refused (409 source_conflict). Where env has
 * no active connector, none lands, nor a holder with no source (a custody table is not promoted): such holders
 * are left out. Objects that cannot be read leave the holders as they are: the service's refusal of the promotion
 * then says why. They are read once a plan (withObjectsReadOnce): its own connector's already were. Whether the
 * name or source is held the service answered with each holder (`promotion`, promotableOf's reads; a service from
 * before it does not say, and the promotion is named).
 */
async function landingPromotions(
  client: PlanClient,
  connectors: Connector[],
  env: string,
  promotable: Map<string, Promotable>,
  call: { signal?: AbortSignal },
): Promise<Map<string, string | null>> {
  if (promotable.size === 0) return new Map();
  const target = connectors.find((c) => c.environmentLabel === env && c.status === 'ACTIVE');
  if (target === undefined) return new Map();
  const read = await client.connectors.objects(target.id, call).catch(() => undefined);
  const objects = new Set(read?.objects.map((object) => object.source));
  const lands = (source: string) => {
    if (read === undefined) return true;
    const landing = `${read.schema}.${source.slice(source.indexOf('.') + 1)}`;
    return landing !== source && objects.has(landing);
  };
  const landings = new Map<string, string | null>();
  for (const row of promotable.values()) {
    if (row.source === null || row.source === undefined || !lands(row.source)) continue;
    landings.set(row.id, takenText(row.promotion));
  }
  return landings;
}

/** What holds the name or source a promotion would take (null: nothing, or the service did not say). */
function takenText(promotion: HeldPromotion | undefined): string | null {
  const taken = promotion?.takenBy;
  if (promotion === undefined || taken === undefined || taken === null) return null;
  const what = taken.kind === 'name' ? `the name ${promotion.name}` : `the source ${promotion.source ?? ''}`;
  const by = taken.id === null ? 'a table you cannot see' : `table ${taken.id}`;
  return `${what} it would take there is held by ${by}`;
}

/**
 * For this project's table in another environment that the caller may promote: how a table gets there, and
 * whether its promotion (`landing`: null where it lands, else what holds the name or source it takes) would.
 */
function promotionText(landing: string | null | undefined, tableId: string, env: string): string {
  if (landing === undefined) return '';
  if (landing === null) return movedByPromotion(tableId, env);
  return `a table moves between environments by promotion, never by apply, and its promotion to ${env} would not land: ${landing}; `;
}

/** For this project's table in another environment that the caller may promote: how a table gets there. */
function movedByPromotion(tableId: string, env: string): string {
  return `a table moves between environments by promotion (gds env promote ${shellWord(tableId)} --to ${shellWord(env)}), never by apply; `;
}

/** `(source, environment, project)` of a table holding a name, its id first when given. */
function holderText(holder: HeldTable | TableListRow, id?: string): string {
  const project =
    holder.project === null || holder.project === undefined ? 'no project' : `project ${holder.project}`;
  return `(${id === undefined ? '' : `${id}, `}${holder.source ?? 'no source'}, ${holder.environmentLabel}, ${project})`;
}

/** Why models of one table name (or slug) are refused: the service would hold one table for them. */
function namesakesReason(declaration: DbtDeclaration, namesakes: DbtDeclaration[]): string {
  const where = (d: DbtDeclaration) => `${d.uniqueId} (${d.source.schema}.${d.source.table})`;
  const fix =
    "give all but one of them another alias (dbt's alias config), or leave all but one out with --exclude";
  if (namesakes.every((d) => lower(d.name) === lower(declaration.name)))
    return `${namesakes.map(where).join(', ')} is also named ${declaration.name}, and a table name is unique in an environment: ${fix}`;
  return `${namesakes.map((d) => `${where(d)} is named ${d.name}`).join(', ')}, the same table name as ${declaration.name} to the service, which compares table names ${SLUG_RULE} (${slugOf(declaration.name)}): ${fix}`;
}

function ownedElsewhereReason(row: TableListRow, name: string, prefix: string): string {
  // A table over the model's relation under another name: named, and what --adopt would do to it.
  const held =
    lower(row.name) === lower(name)
      ? ''
      : `table ${row.name} (${row.id}) over the model's relation ${row.source ?? ''}, `;
  const renamed = held === '' ? '' : ` (apply then renames it ${name})`;
  const by =
    row.project !== null && row.project !== undefined
      ? `by project ${row.project}`
      : lower(row.artifactFile).startsWith(lower(prefix))
        ? `registered with no project, as ${row.artifactFile ?? ''} on connector ${row.connectorId ?? '(none)'}: by hand, or by a gds before projects were recorded; the file name alone does not make it this project's`
        : 'registered by hand';
  return `owned elsewhere (${held}${by}): apply refuses it (exit 6); pass --adopt ${shellWord(row.name)} to take it over${renamed}, or --exclude its model.`;
}

const sortedList = (values: Iterable<string>) => [...new Set(values)].sort().join(', ');

/** Of a table recorded under this project's derived id in a schema none of its models is built into. */
export function namesakeReason(
  row: HeldTable,
  name: string,
  projectName: string,
  projectSchemas: ReadonlySet<string>,
): string {
  return `owned elsewhere: recorded under ${row.project ?? ''}, the id gds derives for a project named ${projectName} here, but in schema ${schemaOfSource(row.source ?? '')}, where none of this project's models is built (${sortedList(projectSchemas)}): another dbt project's of that name on this connector, or this project's before its models moved. apply refuses it (exit 6); pass --adopt ${shellWord(name)} to take it over if it is this project's (the plan's warning tells how to give this project an id of its own).`;
}

/** A `project:` line of gds.yml, the id quoted where YAML would not read it plain. */
function projectLine(id: string): string {
  return `project: ${/^[A-Za-z0-9_][A-Za-z0-9_.@+-]*$/.test(id) ? id : JSON.stringify(id)}`;
}

/**
 * What the plan says of the tables recorded under this project's derived id in schemas none of its models is
 * built into: whose they may be, the id of its own to write in gds.yml, and the --adopt that takes them over.
 */
export function namesakeText(
  rows: HeldTable[],
  of: {
    env: string;
    projectId: string;
    projectName: string;
    projectSchemas: ReadonlySet<string>;
    /** The schemas of the models this plan declares, which the proposed id names. */
    declaredSchemas: ReadonlySet<string>;
    ownTables: number;
    /** The tables are in the project's schemas, and none is a node of the project (not in another schema). */
    noModel?: true;
  },
): string {
  const names = rows.map((row) => row.name).sort();
  const [they, them, are] = names.length === 1 ? ['it', 'it', 'is'] : ['they', 'them', 'are'];
  const where = sortedList(rows.map((row) => schemaOfSource(row.source ?? '')));
  const built = sortedList(of.projectSchemas);
  const ownId = ownProjectId(of.projectName, of.declaredSchemas, of.projectId);
  const ownTables =
    of.ownTables === 0
      ? ''
      : `; this project's ${of.ownTables} table${of.ownTables === 1 ? '' : 's'} recorded under ${of.projectId} in ${built} ${of.ownTables === 1 ? 'is' : 'are'} then owned elsewhere: --adopt each, once`;
  const owners = sortedList(rows.map((row) => row.project ?? ''));
  const listed =
    names.length <= LISTED_NAMESAKES
      ? names.join(', ')
      : `${names.slice(0, LISTED_NAMESAKES).join(', ')} and ${names.length - LISTED_NAMESAKES} more (gds list --json gives each table's project and source)`;
  const adoptions =
    names.length <= LISTED_NAMESAKES
      ? `gds apply ${names.map((name) => `--adopt ${shellWord(name)}`).join(' ')} --prune (with this plan's other flags), or `
      : '';
  const whose =
    of.noModel === true
      ? `in schema ${where}, but ${names.length === 1 ? 'it is no' : 'none of them is a'} model, seed or snapshot of this project: ${they} ${are} another dbt project's of that name built into ${new Set(rows.map((row) => schemaOfSource(row.source ?? ''))).size === 1 ? 'that schema' : 'those schemas'} on this connector (two projects that keep one dbt name derive one id), or this project's before every model of it was renamed. Left alone: never replaced or removed, and no table of this project is created under that id until it is told which.`
      : `but in schema ${where}, where none of this project's models is built (${built}): ${they} ${are} another dbt project's of that name on this connector (two projects that keep one dbt name derive one id), or this project's before its models moved. Left alone: never replaced or removed.`;
  return `${listed} (${of.env}) ${are} recorded under ${owners}, the id gds derives for a project named ${of.projectName} here, ${whose} If ${they} ${are} another project's, give this one an id of its own: write ${ownId === undefined ? 'an id of its own as "project: ID"' : `"${projectLine(ownId)}"`} in gds.yml beside dbt_project.yml${ownTables}. If ${they} ${are} this project's, take ${them} over: ${adoptions}write "${projectLine(of.projectId)}" in gds.yml (an id written in gds.yml owns the tables recorded under it, in any schema).`;
}

/**
 * The id a namesake warning proposes: dbt's name, the schemas the plan's models are built into, and the
 * connectors of the derived id (`jaffle.analytics_b@con_x`); the first schema alone where all of them would pass
 * the service's 200 characters; none without a schema.
 */
function ownProjectId(
  projectName: string,
  schemas: ReadonlySet<string>,
  projectId: string,
): string | undefined {
  const sorted = [...schemas].filter((schema) => schema !== '').sort();
  const place = projectId.slice(projectId.indexOf('@') + 1);
  for (const named of [sorted.join('+'), sorted[0]]) {
    if (named === undefined || named === '') return undefined;
    const id = `${projectName}.${named}@${place}`;
    if (!longerThan(id, 200)) return id; // the service's MAX_PROJECT_ID
  }
  return undefined;
}

/** The tables a namesake warning names one by one (and with an --adopt each); past it, their count. */
const LISTED_NAMESAKES = 10;

/** What the plan says of the tables with no model that have this project's file name and no project. */
function unclaimedText(names: string[], env: string, prefix: string): string {
  const [it, has] = names.length === 1 ? ['it', 'has'] : ['them', 'have'];
  return `${names.join(', ')} (${env}) ${has} this project's file name (${prefix}<table>.json) but no project recorded, and no model here: left alone, never removed, as a file name is no proof this project registered ${it} (anyone may push a file so named). If an earlier gds applied ${it} for this project, adopt and remove ${it}: gds apply ${names.map((name) => `--adopt ${shellWord(name)}`).join(' ')} --prune (with this plan's other flags).`;
}

interface Compared {
  changes: PlannedChanges;
  diffs: PlannedTable['diffs'];
}

/** A new table: everything it declares is a change, diffed against nothing. */
async function newTableDiffs(work: TableWork, connectorId: string | undefined): Promise<Compared> {
  topTierCompilerWanted();
  const libraries = await loadGateDiffLibraries();
  // A new table's diffs are its whole texts again: each is written out when the plan is printed or saved,
  // not held for every table until then.
  const diffs: PlannedTable['diffs'] = {};
  const later = (part: keyof PlannedTable['diffs'], diff: () => string) =>
    Object.defineProperty(diffs, part, { get: diff, enumerable: true });
  const none = { name: '(none)', text: '' };
  later('definition', () => definitionDiff(libraries, null, work.artifact, connectorId));
  const { gate1, intent } = work;
  if (gate1 !== undefined) {
    await checkGateLocally(gate1);
    later('gate1', () => unifiedDiff(libraries.diff, none, gate1));
  }
  if (intent !== undefined)
    later('contract', () =>
      unifiedDiff(libraries.diff, none, { name: 'contract', text: intentText(intent) }),
    );
  return {
    changes: { definition: true, gate1: gate1 !== undefined, contract: intent !== undefined },
    diffs,
  };
}

/** A table the service holds, compared as push --replace, gate apply and contract set-intent --dry-run do. */
async function heldTableDiffs(
  held: HeldTable,
  work: TableWork,
  connectorId: string | undefined,
): Promise<Compared> {
  // What is the same is told without the diff's libraries, and without a diff: most tables of a plan are.
  // Whoever may replace it: a change this caller may not write is refused (forbiddenChange).
  const same = isHeld(held.definition, work.artifact.declared, connectorId);
  if (!same || (work.gate1 !== undefined && held.gate1?.content !== work.gate1.text)) topTierCompilerWanted();
  const definition = same
    ? undefined
    : definitionDiff(await loadGateDiffLibraries(), held.definition, work.artifact, connectorId);
  // A gate1.yml the service already holds word for word is not sent, so there is nothing to refuse. The
  // two equal texts are kept as one (a project's held gate1.yml files are megabytes, read all at once).
  let gate1: string | undefined;
  if (work.gate1 !== undefined && held.gate1?.content === work.gate1.text)
    held.gate1.content = work.gate1.text;
  else if (work.gate1 !== undefined) {
    await checkGateLocally(work.gate1);
    gate1 = await gateDiff(held.id, held.gate1, work.gate1);
  }
  // The contract as it is, whoever may set it: a change this caller may not write is refused (forbiddenChange).
  const contract =
    work.intent === undefined
      ? undefined
      : await intentDiff(held.id, held.contract && { contract: held.contract.contract }, work.intent);
  return {
    changes: {
      definition: definition !== undefined,
      gate1: gate1 !== undefined,
      contract: contract !== undefined,
    },
    diffs: {
      ...(definition === undefined ? {} : { definition }),
      ...(gate1 === undefined ? {} : { gate1 }),
      ...(contract === undefined ? {} : { contract }),
    },
  };
}

/**
 * Whether applying the plan would change anything (`plan --exit-code`): a gone table counts only with
 * `prune` (apply removes it only with --prune; plan shows it but its exit code ignores it), a table to submit
 * only as planned with --submit.
 */
export function planChanges(plan: ProjectPlan, options: { prune?: boolean } = {}): boolean {
  const { create, replace, submit, gone } = plan.counts;
  return create + replace + submit + (options.prune === true ? gone : 0) > 0;
}

/**
 * Every dbt test the plan could not map: the tables' and the project's other tests (not those the selection
 * excluded, which dbt does not run either).
 */
export function notMappedTests(plan: ProjectPlan): NotMappedTest[] {
  return [...plan.tables.flatMap((t) => t.notMappedTests), ...plan.otherTests].filter(
    (t) => t.excluded !== true,
  );
}

/** The names, files and sources by which planProject tells a held table this project's. */
interface ProjectKeys {
  keptNames: Set<string>;
  keptFiles: Set<string>;
  keptSources: Set<string>;
  nodeNames: Set<string>;
  declaredSources: Set<string>;
}
