// dbt's run_results.json and manifest.json read as dbt means them, for the recertification signal
// (§4.8), by gds before it sends and by the service when it receives. Pure: no I/O.
//
// Which command ran is `args.which` (every schema v1-v6 carries it; rpc runs also `args.rpc_method`).
// `docs generate`, `compile`, `list`, `parse`, `show` and rpc compile report their nodes with status
// `success` although they build nothing. Models, seeds and snapshots with status `success` are rebuilt
// tables, and so is a microbatch model with `partial success` (dbt 1.9+: some batches failed, the others
// were written, so its rows changed); tests are evidence only.
import { parseDottedName } from './artifacts/identifiers.js';
import { findBadString } from './text-rule.js';

/** The run-results schema versions read (the trailing `vN.json` of `metadata.dbt_schema_version`). */
export const RUN_RESULTS_VERSIONS: readonly number[] = [1, 2, 3, 4, 5, 6];

/** The resource types a run rebuilds as tables (the first part of a unique id). */
export const BUILT_RESOURCE_TYPES: readonly string[] = ['model', 'seed', 'snapshot'];

/** The result statuses of a node whose relation the run wrote: dbt's `success` and `partial success`. */
export const REBUILT_STATUSES: readonly string[] = ['success', 'partial success'];

/** `args.which` / `args.rpc_method` of the commands that build nothing, with the name a person types. */
const BUILDS_NOTHING: Readonly<Record<string, string>> = {
  generate: 'dbt docs generate',
  'docs.generate': 'dbt docs generate',
  compile: 'dbt compile',
  list: 'dbt list',
  ls: 'dbt ls',
  parse: 'dbt parse',
  show: 'dbt show',
  serve: 'dbt docs serve',
};

/** One table a run rebuilt. */
export interface BuiltNode {
  uniqueId: string;
  resourceType: string;
  /** `relation_name` (v5+), when the result carries one. */
  relationName?: string;
}

export type RunReading =
  | {
      ok: true;
      version: number;
      /** `args.which`, or null when the file does not say. */
      command: string | null;
      built: BuiltNode[];
      invocationId: string | null;
      dbtVersion: string | null;
    }
  | { ok: false; code: 'malformed_run_results' | 'nothing_built'; message: string };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const versionsRead = `v${RUN_RESULTS_VERSIONS[0]}-v${RUN_RESULTS_VERSIONS.at(-1)}`;

function malformed(why: string): RunReading {
  return {
    ok: false,
    code: 'malformed_run_results',
    message: `This is not a dbt run_results.json that gds reads (schema ${versionsRead}): ${why}.`,
  };
}

/** The schema version of a dbt artifact of `kind` (`run-results`, `manifest`), or undefined. */
export function dbtSchemaVersion(metadata: unknown, kind: string): number | undefined {
  if (!isObject(metadata)) return undefined;
  const match = new RegExp(`/${kind}/v(\\d+)\\.json$`).exec(String(metadata['dbt_schema_version'] ?? ''));
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/** The run's command, its rebuilt tables, or why it cannot be read or built nothing. */
export function readRunResults(value: unknown): RunReading {
  if (!isObject(value)) return malformed('it is not a JSON object');
  const metadata = value['metadata'];
  const results = value['results'];
  // Another dbt artifact given in its place (target/manifest.json sits beside run_results.json): say which.
  const other = /\/dbt\/([a-z_-]+)\/v\d+\.json$/.exec(
    String(isObject(metadata) ? (metadata['dbt_schema_version'] ?? '') : ''),
  )?.[1];
  if (other !== undefined && other !== 'run-results')
    return malformed(
      `it is a dbt ${other} (${String((metadata as Record<string, unknown>)['dbt_schema_version'])}); dbt writes its run results to target/run_results.json`,
    );
  if (!isObject(metadata)) return malformed('metadata is missing');
  if (!Array.isArray(results)) return malformed('results is not an array');
  const version = dbtSchemaVersion(metadata, 'run-results');
  if (version === undefined || !RUN_RESULTS_VERSIONS.includes(version)) {
    const found = metadata['dbt_schema_version'];
    return malformed(
      `metadata.dbt_schema_version is ${JSON.stringify(found ?? null)}${version === undefined ? '' : ` (v${version})`}; gds reads ${versionsRead}`,
    );
  }
  const args = isObject(value['args']) ? value['args'] : {};
  const which = typeof args['which'] === 'string' ? args['which'] : null;
  const rpc = typeof args['rpc_method'] === 'string' ? args['rpc_method'] : null;
  const compiledOnly = compileOnlySession(args, which);
  if (compiledOnly !== undefined) {
    return {
      ok: false,
      code: 'nothing_built',
      message: `This run built nothing: it is a ${compiledOnly.command} run (${compiledOnly.said}), which reads the project and rebuilds no table, so there is nothing to recertify. Send the run_results.json of dbt run, build, seed or snapshot.`,
    };
  }
  const built: BuiltNode[] = [];
  for (const [index, result] of results.entries()) {
    if (!isObject(result) || typeof result['status'] !== 'string') {
      return malformed(`results[${index}] has no status`);
    }
    const node = isObject(result['node']) ? result['node'] : undefined;
    const uniqueId = typeof result['unique_id'] === 'string' ? result['unique_id'] : node?.['unique_id'];
    if (typeof uniqueId !== 'string') return malformed(`results[${index}] has no unique_id`);
    const declared = node?.['resource_type'];
    const resourceType = typeof declared === 'string' ? declared : (uniqueId.split('.')[0] ?? '');
    if (!REBUILT_STATUSES.includes(result['status']) || !BUILT_RESOURCE_TYPES.includes(resourceType))
      continue;
    // Without args.which (a stripped or hand-made file): a node dbt only compiled (compile, docs
    // generate) has message null and an empty adapter response; one that ran SQL has them filled.
    if (which === null && rpc === null && !ranSql(result)) continue;
    const relationName = result['relation_name'];
    built.push({
      uniqueId,
      resourceType,
      ...(typeof relationName === 'string' ? { relationName } : {}),
    });
  }
  if (built.length === 0) {
    return {
      ok: false,
      code: 'nothing_built',
      message: `This run built nothing: no model, seed or snapshot result has status success (or partial success)${which === null ? '' : ` (a dbt ${which})`}, so there is nothing to recertify.`,
    };
  }
  return {
    ok: true,
    version,
    command: which,
    built,
    invocationId: typeof metadata['invocation_id'] === 'string' ? metadata['invocation_id'] : null,
    dbtVersion: typeof metadata['dbt_version'] === 'string' ? metadata['dbt_version'] : null,
  };
}

/** A model, seed or snapshot of the run that was not rebuilt: its unique id and dbt's status (error, skipped, …). */
export interface UnbuiltNode {
  uniqueId: string;
  status: string;
}

/**
 * The models, seeds and snapshots a run that built something did not rebuild (their result's status is
 * not success or partial success: an error, a skip after an upstream failure), in the run's order. Their
 * tables are not signalled. Empty for a file `readRunResults` does not read.
 */
export function unbuiltNodes(value: unknown): UnbuiltNode[] {
  if (!isObject(value) || !Array.isArray(value['results'])) return [];
  const unbuilt: UnbuiltNode[] = [];
  for (const result of value['results']) {
    if (!isObject(result) || typeof result['status'] !== 'string') continue;
    if (REBUILT_STATUSES.includes(result['status'])) continue;
    const node = isObject(result['node']) ? result['node'] : undefined;
    const uniqueId = typeof result['unique_id'] === 'string' ? result['unique_id'] : node?.['unique_id'];
    if (typeof uniqueId !== 'string') continue;
    const declared = node?.['resource_type'];
    const resourceType = typeof declared === 'string' ? declared : (uniqueId.split('.')[0] ?? '');
    if (BUILT_RESOURCE_TYPES.includes(resourceType)) unbuilt.push({ uniqueId, status: result['status'] });
  }
  return unbuilt;
}

/** The most resource types, and statuses of one type, a result count keeps (the rest are counted as `other`). */
const MAX_COUNTED_KEYS = 16;
const MAX_COUNTED_KEY_CHARS = 40;

/**
 * How many results of each resource type ended in each status (`{model: {success: 8, error: 1}, test: {pass:
 * 20, fail: 2}}`): the run's evidence in a few numbers, tests included (context only, §4.8). Bounded whatever
 * the file holds: a type or status past the first 16, or longer than 40 characters, is counted as `other`.
 */
export function resultCounts(value: unknown): Record<string, Record<string, number>> {
  // Maps, not objects: a type or status is text from the request (`__proto__`, `constructor`), which as a key
  // of a plain object would reach its prototype.
  const counts = new Map<string, Map<string, number>>();
  if (!isObject(value) || !Array.isArray(value['results'])) return {};
  const keyIn = (known: ReadonlyMap<string, unknown>, key: string) =>
    known.has(key) || (known.size < MAX_COUNTED_KEYS && key.length <= MAX_COUNTED_KEY_CHARS) ? key : 'other';
  for (const result of value['results']) {
    if (!isObject(result) || typeof result['status'] !== 'string') continue;
    const node = isObject(result['node']) ? result['node'] : undefined;
    const uniqueId = typeof result['unique_id'] === 'string' ? result['unique_id'] : node?.['unique_id'];
    const declared = node?.['resource_type'];
    const type =
      typeof declared === 'string'
        ? declared
        : typeof uniqueId === 'string'
          ? (uniqueId.split('.')[0] ?? 'other')
          : 'other';
    const typeKey = keyIn(counts, type);
    const byStatus = counts.get(typeKey) ?? new Map<string, number>();
    counts.set(typeKey, byStatus);
    const status = keyIn(byStatus, result['status']);
    byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
  }
  // Object.fromEntries defines own properties: a `__proto__` key stays a key.
  return Object.fromEntries([...counts].map(([type, byStatus]) => [type, Object.fromEntries(byStatus)]));
}

/** rpc methods (dbt rpc server, dbt Cloud IDE) that compile or query without building a table. */
const RPC_BUILDS_NOTHING: Readonly<Record<string, string>> = {
  compile_sql: 'dbt rpc compile_sql',
  run_sql: 'dbt rpc run_sql (a query, no table)',
  'docs.generate': 'dbt docs generate',
  compile: 'dbt compile',
  gc: 'dbt rpc gc',
  deps: 'dbt deps',
  status: 'dbt rpc status',
  ps: 'dbt rpc ps',
  poll: 'dbt rpc poll',
};

/**
 * The command that built nothing, named by whatever key the run's arguments carry: `which` (dbt Core),
 * `rpc_method` (an rpc or dbt Cloud IDE session), the command line of a `cli_args` rpc call (`cli`) or of
 * the invocation (`invocation_command`), or `compile: true` with no `which` (an IDE compile).
 */
function compileOnlySession(
  args: Record<string, unknown>,
  which: string | null,
): { command: string; said: string } | undefined {
  const text = (key: string) => (typeof args[key] === 'string' ? (args[key] as string) : undefined);
  if (which !== null) {
    const command = BUILDS_NOTHING[which];
    return command === undefined ? undefined : { command, said: `args.which ${JSON.stringify(which)}` };
  }
  const rpc = text('rpc_method');
  if (rpc !== undefined && rpc !== 'cli_args') {
    const command = RPC_BUILDS_NOTHING[rpc] ?? BUILDS_NOTHING[rpc];
    if (command !== undefined) return { command, said: `args.rpc_method ${JSON.stringify(rpc)}` };
  }
  for (const key of ['cli', 'invocation_command', 'command']) {
    const line = text(key);
    if (line === undefined) continue;
    const sub = subcommandOf(line);
    const command = sub === undefined ? undefined : BUILDS_NOTHING[sub.replace(' ', '.')];
    if (command !== undefined) return { command, said: `args.${key} ${JSON.stringify(line)}` };
  }
  if (args['compile'] === true)
    return { command: 'dbt compile', said: 'args.compile true, and no args.which' };
  return undefined;
}

/** The subcommand of a dbt command line ("run" of "dbt run --vars … -s orders", "docs generate"). */
export function subcommandOf(line: string | undefined): string | undefined {
  const words = (line ?? '').trim().split(/\s+/);
  const [first, second] = words[0] === 'dbt' ? words.slice(1) : words;
  if (first === undefined || first === '' || first.startsWith('-')) return undefined;
  return first === 'docs' && second !== undefined && !second.startsWith('-') ? `docs ${second}` : first;
}

/** False only for what dbt writes for a node it compiled without running: message null, adapter response {}. */
function ranSql(result: Record<string, unknown>): boolean {
  const response = result['adapter_response'];
  const compiledOnly =
    'message' in result &&
    (result['message'] === null || result['message'] === '') &&
    isObject(response) &&
    Object.keys(response).length === 0;
  return !compiledOnly;
}

/** A rebuilt table as the run names it: its name, its schema when known, and its manifest checksum. */
export interface NamedTable {
  name: string;
  schema?: string;
  definitionHash?: string;
}

const named = (...candidates: unknown[]): string | undefined =>
  candidates.find((c): c is string => typeof c === 'string' && c !== '');

/**
 * The relation dbt builds for a node named only by its unique id: `model.<project>.<name>`, or for a
 * versioned model (dbt 1.5+) `model.<project>.<name>.v<version>`, built as `<name>_v<version>`.
 */
function uniqueIdName(uniqueId: string): string | undefined {
  const [, , name, ...version] = uniqueId.split('.');
  if (name === undefined || name === '') return undefined;
  const v = version.join('.');
  return /^v./.test(v) ? `${name}_${v}` : name;
}

/**
 * The table a rebuilt node names: the manifest node's alias or name, else the relation name's last part,
 * else its unique id (uniqueIdName); the schema likewise. An empty string names
 * nothing, so a manifest node with an empty alias and name falls back as a run without a manifest does.
 * Null when nothing names the table.
 */
export function namedTable(built: BuiltNode, node: ManifestNode | undefined): NamedTable | null {
  const relation =
    built.relationName === undefined
      ? undefined
      : // dbt quotes a relation as its adapter does: backticks on BigQuery (whose project names hold
        // hyphens), Databricks and Spark; double quotes elsewhere.
        parseDottedName(built.relationName, { backticks: true });
  const name = named(node?.alias, node?.name, relation?.at(-1), uniqueIdName(built.uniqueId));
  if (name === undefined) return null;
  const schema = named(node?.schema, relation?.at(-2));
  const checksum = named(node?.checksum?.checksum);
  return { name, ...(schema ? { schema } : {}), ...(checksum ? { definitionHash: checksum } : {}) };
}

/**
 * The tables the run rebuilt (named through `nodes`, the manifest's, when one is given), or nothing_built
 * when none of them can be named: a run that rebuilt no table gds can signal.
 */
export function namedTables(
  built: readonly BuiltNode[],
  nodes: Readonly<Record<string, ManifestNode>> | null,
): { ok: true; tables: NamedTable[] } | { ok: false; code: 'nothing_built'; message: string } {
  const tables = built.flatMap((b) => namedTable(b, nodes?.[b.uniqueId]) ?? []);
  if (tables.length > 0) return { ok: true, tables };
  const ids = built.slice(0, 5).map((b) => JSON.stringify(b.uniqueId));
  return {
    ok: false,
    code: 'nothing_built',
    message:
      `This run built nothing gds can name: of its successful model, seed and snapshot results ` +
      `(${ids.join(', ')}${built.length > ids.length ? ', …' : ''}), none names its table by a relation_name, ` +
      `a manifest node's alias or name, or a unique id of the form model.<project>.<name>, so there is nothing to recertify.`,
  };
}

/** What the service reads of a result: its status, which node, the relation, and whether it ran SQL. */
const RESULT_FIELDS = ['status', 'unique_id', 'relation_name', 'message', 'adapter_response'];

/**
 * The run results with each result reduced to RESULT_FIELDS (and a v1 result's `node` to its unique_id and
 * resource_type): dbt also writes each result's compiled SQL, timing and failures, so the run of a large
 * project passes the request's 25 MB. Everything else (metadata, args, elapsed_time) is kept as it is.
 */
export function reduceRunResults(value: Record<string, unknown>): Record<string, unknown> {
  if (!Array.isArray(value['results'])) return value;
  return {
    ...value,
    results: value['results'].map((result: unknown) => {
      if (!isObject(result)) return result;
      const kept: Record<string, unknown> = {};
      for (const field of RESULT_FIELDS) if (field in result) kept[field] = result[field];
      const node = result['node'];
      if (isObject(node)) kept['node'] = pick(node, 'unique_id', 'resource_type');
      return kept;
    }),
  };
}

/** What drift detection reads of a manifest node: exactly these fields. */
export interface ManifestNode {
  unique_id: string;
  resource_type: string;
  database?: string | null;
  schema?: string;
  name?: string;
  alias?: string | null;
  checksum?: { name?: string; checksum?: string };
}

export interface ReducedManifest {
  metadata?: { dbt_schema_version: string };
  nodes: Record<string, ManifestNode>;
}

/**
 * The manifest reduced to the nodes of rebuilt resource types and the fields drift detection reads,
 * so a manifest of any size fits the request; null when `value` is not a dbt manifest.
 */
export function reduceManifest(value: unknown): ReducedManifest | null {
  if (!isObject(value) || !isObject(value['nodes'])) return null;
  const metadata = value['metadata'];
  // A hand-written manifest may carry nodes and no metadata; another artifact's schema is not a manifest.
  const schema = isObject(metadata) ? metadata['dbt_schema_version'] : undefined;
  if (typeof schema === 'string' && dbtSchemaVersion(metadata, 'manifest') === undefined) return null;
  const nodes: Record<string, ManifestNode> = {};
  for (const [uniqueId, node] of Object.entries(value['nodes'])) {
    if (!isObject(node)) continue;
    const resourceType =
      typeof node['resource_type'] === 'string' ? node['resource_type'] : uniqueId.split('.')[0];
    if (resourceType === undefined || !BUILT_RESOURCE_TYPES.includes(resourceType)) continue;
    const checksum = isObject(node['checksum']) ? node['checksum'] : undefined;
    nodes[uniqueId] = {
      unique_id: uniqueId,
      resource_type: resourceType,
      ...pick(node, 'database', 'schema', 'name', 'alias'),
      ...(checksum === undefined ? {} : { checksum: pick(checksum, 'name', 'checksum') }),
    };
  }
  return { ...(typeof schema === 'string' ? { metadata: { dbt_schema_version: schema } } : {}), nodes };
}

function pick(source: Record<string, unknown>, ...keys: string[]): Record<string, string | null> {
  const picked: Record<string, string | null> = {};
  for (const key of keys) {
    const value = source[key];
    if (typeof value === 'string' || value === null) picked[key] = value;
  }
  return picked;
}

/**
 * The manifest's nodes in text a database stores, and those left out (each with the first bad string found):
 * a node naming a model with a NUL or a lone surrogate (spec §4.8: a bad manifest is ignored, never an error).
 */
export function storableNodes<Node>(nodes: Record<string, Node>): {
  kept: Record<string, Node>;
  leftOut: Array<{ path: string; problem: string }>;
} {
  const kept: Record<string, Node> = {};
  const leftOut: Array<{ path: string; problem: string }> = [];
  for (const [id, node] of Object.entries(nodes)) {
    const bad = findBadString({ [id]: node });
    if (bad === undefined) kept[id] = node;
    else leftOut.push(bad);
  }
  return { kept, leftOut };
}
