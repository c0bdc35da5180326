// dbt's node selection (`--select` / `--exclude`) as `dbt ls` resolves it, the part a governance job needs:
// names and fqn wildcards (`orders`, `staging.*`, `jaffle_shop.marts`), `tag:`, `path:`, `file:` (the file's
// name, or its stem), `source:`, `state:` against another manifest (`--state`),
// `result:` and `source_status:` against the run_results.json and sources.json of that folder, `config.KEY:`
// (any config: `config.meta.owner:`), `group:`, `access:`, `resource_type:`, `fqn:`, `package:`, `exposure:`,
// `metric:`, `semantic_model:`, `saved_query:`, graph operators (`+x`, `x+`, `2+x`, `x+1`, `@x`), a space for a
// union and a comma for an intersection. The graph holds the tests, exposures, metrics, semantic models and saved queries too, as dbt's does:
// `@x` reaches the parents of x's tests (a relationships test's other model). The methods match tests too
// (`test_name:`, `test_type:`, `unit_test:`), and the tests dbt runs are worked out as dbt's do, by the indirect selection
// (`--indirect-selection`) and the exclusions: a test dbt would not run is no rule of its table. `state:`
// selects a changed test's model too. The tables selected are always among the enabled models, seeds and
// snapshots.
//
// Every method means what it meant to the dbt that wrote the manifest (metadata.dbt_version; none: the newest
// dbt's), as docs/dbt.md's version table lists: a method that dbt did not have (METHODS_SINCE: metric:
// 1.0, result: 1.0, source_status: 1.1, file: 1.2, group:/access:/version: 1.5, semantic_model: 1.6.4, saved_query: 1.7,
// unit_test: 1.8, selector: 1.12) is a DbtSelectionError naming the dbt that added it, as that dbt refuses an
// unknown method; the methods' globs are 1.5's, group:'s 1.8's (exact before); file: is the file's name from
// 1.2 and its stem too from 1.6, and a bare `orders.sql` is a name (fqn) before 1.2; config.KEY: takes a list's
// items and `true`/`false` from 1.3, path: sees only the root project's nodes before 1.4 and no model by
// its .yml before 1.5; tag:, path:, file: and package: see the semantic models from 1.6.4 and the saved
// queries from 1.8, and a name the exposures, metrics, semantic models and saved queries from 1.7; state:
// compares the semantic models and saved queries from 1.8; resource_type: takes group from 1.5,
// semantic_model 1.6, saved_query 1.7, unit_test and fixture 1.8, function 1.11.
import type { Manifest, ManifestNode } from './manifest.js';
import { DECLARED_TYPES } from './manifest.js';
import { attachedNode } from './attached.js';
import { fusionGenericTest, testNamedBy, writtenByFusion } from './fusion.js';
import { stateMatches, STATE_SELECTORS } from './state.js';
import { sourcesWithStatus, type PreviousRun } from './previous-run.js';
import type { DbtSelection, IndirectSelection } from './types.js';

/** A selector gds cannot read or that matches nothing; the message names it. */
export class DbtSelectionError extends Error {
  constructor(
    message: string,
    readonly selector: string,
  ) {
    super(message);
    this.name = 'DbtSelectionError';
  }
}

export const SELECTOR_METHODS = [
  'fqn',
  'tag',
  'path',
  'file',
  'source',
  'state',
  'result',
  'source_status',
  'config.KEY',
  'group',
  'access',
  'resource_type',
  'package',
  'exposure',
  'metric',
  'semantic_model',
  'saved_query',
  'version',
  'test_name',
  'test_type',
  'unit_test',
  'selector',
] as const;

/**
 * dbt's `--indirect-selection` (DBT_INDIRECT_SELECTION, a YAML selector's `indirect_selection`): which tests
 * of the selected nodes dbt runs. eager: a test any of whose parents is selected; cautious: all of them;
 * buildable: all of them selected or parents of the selected; empty: only the tests selected themselves.
 */
export const INDIRECT_SELECTION_MODES: readonly IndirectSelection[] = [
  'eager',
  'cautious',
  'buildable',
  'empty',
];
export type { IndirectSelection };

export const isIndirectSelection = (value: unknown): value is IndirectSelection =>
  typeof value === 'string' && (INDIRECT_SELECTION_MODES as readonly string[]).includes(value);

/**
 * The indirect selection of the dbt that wrote the manifest when nothing sets one: eager, except dbt 0.20 and
 * 0.21, which selected a test only when all its parents were (cautious; 0.21's --greedy was the opt-in to
 * eager, and 1.0 made eager the default again: docs.getdbt.com, test selection examples).
 */
export function defaultIndirectSelection(dbtVersion: string | undefined): IndirectSelection {
  return /^0\.2[01]\./.test(dbtVersion ?? '') ? 'cautious' : 'eager';
}

interface Graph {
  parents: Map<string, string[]>;
  children: Map<string, string[]>;
}

function graphOf(manifest: Manifest): Graph {
  const parents = new Map<string, string[]>();
  const children = new Map<string, string[]>();
  // forEach and an index: no iterator's result object a node and an edge (TurboFan, which would elide them,
  // is held off while a project is read).
  const link = (node: ManifestNode) => {
    if (!node.enabled) return;
    parents.set(node.uniqueId, node.dependsOn);
    const dependsOn = node.dependsOn;
    for (let i = 0; i < dependsOn.length; i++) {
      const parent = dependsOn[i] as string;
      const list = children.get(parent) ?? [];
      list.push(node.uniqueId);
      children.set(parent, list);
    }
  };
  manifest.nodes.forEach(link);
  // dbt's graph holds the exposures, metrics, semantic models and saved queries too.
  manifest.others.forEach(link);
  return { parents, children };
}

interface Context {
  manifest: Manifest;
  graph: Graph;
  /** The manifest `state:` compares with (`--state`). */
  state?: Manifest;
  /** The run results and source freshness `result:` and `source_status:` compare with (`--state`). */
  previous: PreviousRun;
  /** The indirect selection of the flag (or env), a YAML criterion's own `indirect_selection` aside. */
  mode: IndirectSelection;
}

/**
 * What dbt's selector selects (any node of its graph, tests too: dbt's direct nodes), and the tests a
 * cautious or buildable criterion held back, which a union with their other parents may take in.
 */
interface Picked {
  direct: Set<string>;
  indirect: Set<string>;
}

const TEST_TYPES = new Set(['test', 'unit_test']);

/** dbt's selection: the models, seeds and snapshots selected (manifest order), and the tests dbt runs. */
export interface DbtSelected {
  nodes: string[];
  tests: Set<string>;
}

/**
 * The unique ids of the selected enabled models, seeds and snapshots, in manifest order. A `--select` or
 * `--exclude` that matches nothing is said through `warn` and adds or removes nothing, as dbt does (with
 * `strict`, a `--select` that matches nothing is a DbtSelectionError).
 */
export function selectNodes(
  manifest: Manifest,
  selection: DbtSelection,
  warn: (message: string) => void = () => {},
  state?: Manifest,
  previous: PreviousRun = {},
): string[] {
  return selectDbt(manifest, selection, warn, state, previous).nodes;
}

/** selectNodes, with the tests dbt runs under the selection (its exclusions and indirect selection). */
export function selectDbt(
  manifest: Manifest,
  selection: DbtSelection,
  warn: (message: string) => void = () => {},
  state?: Manifest,
  previous: PreviousRun = {},
): DbtSelected {
  const candidates = [...manifest.nodes.values()].filter(
    (n) => DECLARED_TYPES.has(n.resourceType) && n.enabled,
  );
  const declared = new Set(candidates.map((n) => n.uniqueId));
  const mode = selection.indirectSelection ?? defaultIndirectSelection(manifest.dbtVersion);
  const context: Context = {
    manifest,
    graph: graphOf(manifest),
    mode,
    previous,
    ...(state === undefined ? {} : { state }),
  };
  const result = (picked: Picked): DbtSelected => {
    const tests = new Set<string>();
    for (const id of picked.direct)
      if (TEST_TYPES.has(manifest.nodes.get(id)?.resourceType ?? '')) tests.add(id);
    return { nodes: candidates.filter((n) => picked.direct.has(n.uniqueId)).map((n) => n.uniqueId), tests };
  };
  const yaml = yamlSelector(manifest, selection, warn);
  if (yaml !== undefined) {
    // Before dbt 1.8 a YAML criterion without indirect_selection had its own default (eager; not greedy in
    // 0.20 and 0.21), whatever the flag: SelectionCriteria read no flag there (dbt-core #9776).
    const ownDefault = dbtBefore1(manifest.dbtVersion, 8);
    if (ownDefault && selection.indirectSelection !== undefined && selection.indirectSelection !== 'eager')
      warn(
        `dbt ${manifest.dbtVersion ?? ''}, which wrote the manifest, ignores --indirect-selection ${selection.indirectSelection} beside a YAML selector: the selector's criteria without indirect_selection are ${defaultIndirectSelection(manifest.dbtVersion)}, as there (dbt 1.8 made them take the flag's)`,
      );
    const yamlContext = ownDefault
      ? { ...context, mode: defaultIndirectSelection(manifest.dbtVersion) }
      : context;
    const found = evaluateDefinition(yaml.definition, yamlContext, true, [yaml.name]);
    if (![...found.direct].some((id) => declared.has(id))) {
      const message = `the selector ${yaml.name} of selectors.yml matches no enabled model, seed or snapshot of the project`;
      if (selection.strict === true) throw new DbtSelectionError(message, yaml.name);
      warn(`${message}; it selects nothing`);
    }
    return result(found);
  }
  const selects = (selection.select ?? []).flatMap(splitUnion);
  // dbt's default selection (fqn:*, source:*, exposure:*, metric:*): every node, every test among them.
  const everything = (): Picked => ({ direct: new Set(context.graph.parents.keys()), indirect: new Set() });
  const included =
    selects.length === 0
      ? everything()
      : combine(
          'union',
          selects.map((selector) => {
            const found = evaluate(selector, context, true);
            if (![...found.direct].some((id) => declared.has(id))) {
              const message = `--select ${selector} matches no enabled model, seed or snapshot of the project${/(^|[,@+])file:[^,]*\//.test(selector) ? " (dbt's file: compares a file's name, never its folders: path: selects by path)" : ''}${emptyPartNote(selector)}${packagePathNote(manifest, selector)}`;
              if (selection.strict === true) throw new DbtSelectionError(message, selector);
              warn(`${message}; it selects nothing`);
            }
            return found;
          }),
          mode,
          context,
        );
  const excludes = (selection.exclude ?? []).flatMap(splitUnion);
  if (excludes.length === 0) return result(included);
  // dbt before 1.5 parsed --exclude eagerly whatever the mode (graph/cli.py parse_difference): a test any of
  // whose parents is excluded is excluded too. From 1.5 its criteria and their union have the flag's mode
  // (parse_difference passes flags.INDIRECT_SELECTION, and SelectionCriteria takes the flag's): under
  // cautious or buildable, a test whose other parent is still selected stays selected, and dbt runs it.
  const excludeMode: IndirectSelection = dbtBefore1(manifest.dbtVersion, 5) ? 'eager' : mode;
  const eagerly: Context = { ...context, mode: excludeMode };
  const excluded = combine(
    'union',
    excludes.map((selector) => {
      // A test excluded is not run; its model still is (dbt builds it), so its gate stays selected.
      const found = evaluate(selector, eagerly, false);
      if (
        ![...found.direct].some(
          (id) => declared.has(id) || TEST_TYPES.has(manifest.nodes.get(id)?.resourceType ?? ''),
        )
      )
        warn(
          `--exclude ${selector} matches no enabled model, seed, snapshot or test of the project${emptyPartNote(selector)}${packagePathNote(manifest, selector)}; it excludes nothing`,
        );
      return found;
    }),
    excludeMode,
    context,
  );
  return result(combine('difference', [included, excluded], mode, context));
}

type SetOperation = 'union' | 'intersection' | 'difference';

/**
 * dbt's select_nodes_recursively for a union, intersection or difference: the direct nodes combined, the
 * held-back tests combined with them, and (cautious, buildable) those tests whose parents are now selected.
 */
function combine(
  operation: SetOperation,
  parts: Picked[],
  mode: IndirectSelection,
  context: Context,
): Picked {
  const apply = (sets: Array<Set<string>>): Set<string> => {
    const [first, ...rest] = sets;
    if (first === undefined) return new Set();
    if (operation === 'union') return new Set(sets.flatMap((set) => [...set]));
    return new Set(
      [...first].filter((id) =>
        operation === 'intersection' ? rest.every((set) => set.has(id)) : !rest.some((set) => set.has(id)),
      ),
    );
  };
  const direct = apply(parts.map((p) => p.direct));
  const indirect = apply(parts.map((p) => new Set([...p.direct, ...p.indirect])));
  if (mode === 'cautious' || mode === 'buildable') {
    const reach = mode === 'buildable' ? withAncestors(direct, context) : direct;
    for (const id of indirect) if (!direct.has(id) && testParentsWithin(id, reach, context)) direct.add(id);
  }
  return { direct, indirect };
}

function withAncestors(selected: Set<string>, context: Context): Set<string> {
  const out = new Set(selected);
  walk(selected, context.graph.parents, Infinity, out);
  return out;
}

/** Whether id is a test all of whose parents are in `within`. */
function testParentsWithin(id: string, within: Set<string>, context: Context): boolean {
  const node = context.manifest.nodes.get(id);
  return (
    node !== undefined && TEST_TYPES.has(node.resourceType) && node.dependsOn.every((p) => within.has(p))
  );
}

/**
 * dbt's expand_selection: the tests of the selected nodes (their children) that the mode selects too;
 * those a cautious or buildable mode does not yet are held back (indirect).
 */
function expand(selected: Set<string>, mode: IndirectSelection, context: Context): Picked {
  const direct = new Set(selected);
  const indirect = new Set<string>();
  if (mode === 'empty') return { direct, indirect };
  let buildable: Set<string> | undefined;
  if (mode === 'buildable') {
    buildable = withAncestors(selected, context);
    for (const id of context.manifest.sources.keys()) buildable.add(id);
  }
  for (const id of selected)
    for (const child of context.graph.children.get(id) ?? []) {
      const node = context.manifest.nodes.get(child);
      if (node === undefined || !TEST_TYPES.has(node.resourceType) || direct.has(child)) continue;
      if (mode === 'eager' || testParentsWithin(child, selected, context)) direct.add(child);
      else if (buildable !== undefined && testParentsWithin(child, buildable, context)) direct.add(child);
      else indirect.add(child);
    }
  return { direct, indirect };
}

/**
 * The YAML selector dbt would use: `--selector NAME`, else with neither --select nor --exclude the one
 * selectors.yml marks `default: true` (dbt's get_selection_spec). Undefined: select and exclude apply.
 */
function yamlSelector(
  manifest: Manifest,
  selection: DbtSelection,
  warn: (message: string) => void,
): { name: string; definition: unknown } | undefined {
  const { selector } = selection;
  if (selector === undefined) {
    if ((selection.select ?? []).length > 0 || (selection.exclude ?? []).length > 0) return undefined;
    for (const [name, entry] of manifest.selectors)
      if (entry.default) {
        warn(
          `no --select or --exclude: the selection is selectors.yml's default selector ${name}, as dbt's (pass --select to choose another)`,
        );
        return { name, definition: entry.definition };
      }
    return undefined;
  }
  // dbt ignores --select and --exclude beside --selector: gds says so rather than leave them out unseen.
  if ((selection.select ?? []).length > 0 || (selection.exclude ?? []).length > 0)
    throw new DbtSelectionError(
      `--selector ${selector} is the whole selection: it takes no --select or --exclude (dbt ignores them); put them in the selector's definition`,
      selector,
    );
  const entry = manifest.selectors.get(selector);
  if (entry === undefined)
    throw new DbtSelectionError(
      `no selector ${JSON.stringify(selector)} in the project's selectors.yml (manifest.json names ${[...manifest.selectors.keys()].join(', ') || 'none'})`,
      selector,
    );
  return { name: selector, definition: entry.definition };
}

const isDict = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * A selectors.yml definition, as dbt-core's parse_from_definition reads it (graph/cli.py): a CLI-style
 * string (one criterion), `union:` or `intersection:` lists (one `exclude:` item among them taken away from
 * the rest), `method: value`, or a full dict (`method`, `value`, `parents`, `parents_depth`, `children`,
 * `children_depth`, `childrens_parents`, `indirect_selection`, `exclude`); `method: selector` names another
 * selector. A criterion without `indirect_selection` has the flag's (dbt 1.8+; before, its own default: see
 * selectDbt); the sets of a definition
 * combine as dbt's do, eagerly.
 */
function evaluateDefinition(
  definition: unknown,
  context: Context,
  testsSelectModels: boolean,
  path: string[],
): Picked {
  const where = path.join(' > ');
  const refuse = (message: string): never => {
    throw new DbtSelectionError(`the selector ${where}: ${message}`, path[0] ?? '');
  };
  const recurse = (def: unknown, tests = testsSelectModels) => evaluateDefinition(def, context, tests, path);
  const exclusions = (list: unknown): Picked => {
    if (!Array.isArray(list)) return refuse('exclude must be a list');
    // A test excluded is not run; its model still is, as for --exclude.
    return combine(
      'union',
      list.map((def) => recurse(def, false)),
      'eager',
      context,
    );
  };
  const without = (found: Picked, excluded: Picked | undefined) =>
    excluded === undefined ? found : combine('difference', [found, excluded], 'eager', context);
  if (typeof definition === 'string')
    return evaluateCriterion(
      parseAtom(definition, where),
      definition,
      where,
      context,
      testsSelectModels,
      context.mode,
    );
  if (!isDict(definition)) return refuse('a definition is a string, union, intersection or dictionary');
  const setKey = 'union' in definition ? 'union' : 'intersection' in definition ? 'intersection' : undefined;
  if (setKey !== undefined) {
    const list = definition[setKey];
    if (!Array.isArray(list)) return refuse(`${setKey} must be a list`);
    const parts: Picked[] = [];
    let excluded: Picked | undefined;
    for (const item of list) {
      if (isDict(item) && 'exclude' in item) {
        if (excluded !== undefined) refuse(`${setKey} takes one exclude, not several`);
        excluded = exclusions(item['exclude']);
      } else parts.push(recurse(item));
    }
    return without(combine(setKey, parts, 'eager', context), excluded);
  }
  const keys = Object.keys(definition);
  let criterion: Record<string, unknown>;
  if (keys.length === 1) criterion = { method: keys[0], value: definition[keys[0] as string] };
  else if ('method' in definition && 'value' in definition) criterion = definition;
  else
    return refuse(`a dictionary is method: value, or has method and value keys (it has ${keys.join(', ')})`);
  const { method, value } = criterion;
  if (typeof method !== 'string') return refuse('its method must be a text');
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')
    return refuse(`${method}: its value must be a text`);
  const excluded = 'exclude' in criterion ? exclusions(criterion['exclude']) : undefined;
  if (method === 'selector') {
    const other = context.manifest.selectors.get(String(value));
    if (other === undefined) return refuse(`no selector ${JSON.stringify(value)} in selectors.yml`);
    if (path.includes(String(value))) return refuse(`it names itself (${String(value)})`);
    return without(
      evaluateDefinition(other.definition, context, testsSelectModels, [...path, String(value)]),
      excluded,
    );
  }
  // dbt 0.21's `greedy: true` was a criterion's eager selection (1.0 renamed it indirect_selection).
  const greedy = criterion['greedy'];
  const written =
    criterion['indirect_selection'] ??
    (typeof greedy === 'boolean' && /^0\./.test(context.manifest.dbtVersion ?? '')
      ? greedy
        ? 'eager'
        : 'cautious'
      : undefined);
  if (written !== undefined && written !== null && !isIndirectSelection(written))
    return refuse(
      `indirect_selection must be one of ${INDIRECT_SELECTION_MODES.join(', ')} (it is ${JSON.stringify(written)})`,
    );
  // dbt's _match_to_int: a depth of 0, '' or none is no limit.
  const depth = (flag: string, key: string) => {
    if (criterion[flag] !== true) return undefined;
    const raw = criterion[key];
    if (raw === undefined || raw === null || raw === '' || raw === 0) return '';
    if (!/^\d+$/.test(String(raw))) return refuse(`${key} must be a number`);
    return String(raw);
  };
  const body = `${method}:${String(value)}`;
  const found = evaluateCriterion(
    {
      at: criterion['childrens_parents'] === true,
      upDepth: depth('parents', 'parents_depth'),
      body,
      downDepth: depth('children', 'children_depth'),
      value,
    },
    body,
    where,
    context,
    testsSelectModels,
    isIndirectSelection(written) ? written : context.mode,
  );
  return without(found, excluded);
}

function splitUnion(entry: string): string[] {
  return entry.split(/\s+/).filter((s) => s !== '');
}

/**
 * One union member: a comma-separated intersection of atoms. With `testsSelectModels`, a test `state:`
 * matches stands for the node it is attached to (see evaluateCriterion).
 */
function evaluate(selector: string, context: Context, testsSelectModels: boolean): Picked {
  const atoms = selector.split(',');
  if (atoms.every((a) => a === ''))
    throw new DbtSelectionError(`the selector ${JSON.stringify(selector)} is empty`, selector);
  return combine(
    'intersection',
    atoms.map((atom) =>
      // dbt reads an empty part (`orders,`) as the name "", which no node has: the intersection is empty.
      atom === ''
        ? { direct: new Set<string>(), indirect: new Set<string>() }
        : evaluateCriterion(
            parseAtom(atom, selector),
            atom,
            selector,
            context,
            testsSelectModels,
            context.mode,
          ),
    ),
    context.mode,
    context,
  );
}

/**
 * Why a path that only another package's files are at selects nothing (dbt's path: looks in the root project's
 * folder, where the package's files are not), naming those packages; '' when no such package file matches, or
 * the root project has files at the path too (then the path selects, and another part matched nothing).
 */
function packagePathNote(manifest: Manifest, selector: string): string {
  const root = manifest.projectName;
  if (root === undefined) return '';
  const packages = new Set<string>();
  for (const atom of selector.split(',')) {
    const body = ATOM.exec(atom)?.[3] ?? '';
    const value = body.startsWith('path:')
      ? body.slice('path:'.length)
      : !body.includes(':') && body.includes('/')
        ? body
        : undefined;
    if (value === undefined) continue;
    const atPath = [...manifest.nodes.values()].filter(
      (n) => n.enabled && DECLARED_TYPES.has(n.resourceType) && pathMatches(n, value),
    );
    // The root project's files there, or a package's reached through its folders: the path selects, and what
    // matched nothing is another part of the selector.
    const inRoot = rootProjectPaths(manifest, root);
    if (atPath.some((n) => n.packageName === root || pathMatches(n, value, true, inRoot))) continue;
    for (const n of atPath) packages.add(n.packageName);
  }
  const [first] = packages;
  if (first === undefined) return '';
  const named = [...packages].join(', ');
  return ` (dbt's path: globs the root project's folder, and only the package ${named} has files at that path: package:${first} selects a package's nodes)`;
}

/** Why a selector with an empty part beside a comma (`orders,`) selects nothing, or ''. */
function emptyPartNote(selector: string): string {
  return /(^|,)(,|$)/.test(selector)
    ? ' (dbt reads the empty part beside its comma as a name no node has, so the intersection is empty: drop the comma)'
    : '';
}

const ATOM = /^(@)?(?:(\d*)\+)?(.+?)(?:\+(\d*))?$/;

/** A CLI atom (`@`, `2+`, `method:value`, `+1`) as a criterion. */
function parseAtom(atom: string, selector: string): Criterion {
  const match = ATOM.exec(atom);
  if (!match) throw new DbtSelectionError(`cannot read the selector ${JSON.stringify(atom)}`, selector);
  const [, at, upDepth, body = '', downDepth] = match;
  return { at: at !== undefined, upDepth, body, downDepth };
}

/** One criterion: `method:value` (body), with `@` and the depths of its `+` operators (undefined: none). */
interface Criterion {
  at: boolean;
  upDepth: string | undefined;
  body: string;
  downDepth: string | undefined;
  /** A YAML selector's value as YAML typed it (`config.enabled: true`); a CLI's is the text of the body. */
  value?: ConfigScalar;
}

function evaluateCriterion(
  { at, upDepth, body, downDepth, value }: Criterion,
  atom: string,
  selector: string,
  context: Context,
  testsSelectModels: boolean,
  mode: IndirectSelection,
): Picked {
  const { graph } = context;
  const parentsToo = upDepth !== undefined;
  const childrenToo = downDepth !== undefined;
  if (at && childrenToo)
    throw new DbtSelectionError(
      `${atom}: @ cannot be combined with a trailing + (dbt refuses it too)`,
      selector,
    );
  const seeds = matchMethod(body, atom, selector, context, value, testsSelectModels);
  const all = new Set(seeds);
  const depth = (text: string | undefined) => (text === undefined || text === '' ? Infinity : Number(text));
  if (parentsToo) walk(seeds, graph.parents, depth(upDepth), all);
  if (childrenToo || at) {
    const below = new Set<string>();
    walk(seeds, graph.children, childrenToo ? depth(downDepth) : Infinity, below);
    for (const id of below) all.add(id);
    // dbt's @: the children, then the parents of the children and of the selected nodes themselves.
    if (at) walk([...seeds, ...below], graph.parents, Infinity, all);
  }
  // A test selected by its change (state:) is run by dbt against its model: to gds, the model's gate is
  // selected, whole. The graph was walked from the test, as dbt walks it (a test has no children; its
  // parents are its models).
  if (testsSelectModels && /^state:/.test(body) && TEST_STATE_SELECTORS.has(body.slice('state:'.length)))
    for (const id of seeds) {
      const model = testedNode(context.manifest, id);
      if (model !== undefined) all.add(model);
    }
  return expand(all, mode, context);
}

/** The model, seed or snapshot a test id is attached to (undefined: not a test, or a test of no one node). */
function testedNode(manifest: Manifest, id: string): string | undefined {
  const test = manifest.nodes.get(id);
  if (test?.resourceType !== 'test') return undefined;
  const attached = attachedNode(manifest, test);
  if (attached !== undefined) return attached;
  const declared = test.dependsOn.filter((parent) => DECLARED_TYPES.has(parent.split('.')[0] ?? ''));
  return declared.length === 1 ? declared[0] : undefined;
}

function walk(from: Iterable<string>, edges: Map<string, string[]>, depth: number, into: Set<string>): void {
  let frontier = [...from];
  for (let level = 0; level < depth && frontier.length > 0; level++) {
    const next: string[] = [];
    for (const id of frontier) {
      for (const other of edges.get(id) ?? []) {
        if (into.has(other)) continue;
        into.add(other);
        next.push(other);
      }
    }
    frontier = next;
  }
}

/** dbt's NodeType values: what `resource_type:` accepts. */
const DBT_RESOURCE_TYPES = [
  'model',
  'seed',
  'snapshot',
  'source',
  'test',
  'unit_test',
  'analysis',
  'operation',
  'rpc',
  'sql_operation',
  'doc',
  'macro',
  'exposure',
  'metric',
  'group',
  'saved_query',
  'semantic_model',
  'fixture',
  'function',
];

/**
 * The resource types a dbt 1.x added to its NodeType, by the version that added them (the manifests gain their
 * sections in turn: groups 1.5, semantic_models 1.6, saved_queries 1.7, unit_tests 1.8, functions 1.11): dbt's
 * resource_type method is NodeType(value), and an older dbt refuses the type as invalid.
 */
const RESOURCE_TYPES_SINCE: Readonly<Record<string, number>> = {
  group: 5,
  semantic_model: 6,
  saved_query: 7,
  unit_test: 8,
  fixture: 8,
  function: 11,
};

/** The state selectors a test is selected by: those of a change. */
const TEST_STATE_SELECTORS = new Set(STATE_SELECTORS.filter((s) => s !== 'old' && s !== 'unmodified'));

/** The enabled nodes (tests too, as dbt's methods search them) that `method:value` names. */
function matchMethod(
  body: string,
  atom: string,
  selector: string,
  context: Context,
  typed?: ConfigScalar,
  testsSelectModels = true,
): Set<string> {
  const { manifest } = context;
  const colon = body.indexOf(':');
  const method = colon < 0 ? undefined : body.slice(0, colon);
  const value = colon < 0 ? body : body.slice(colon + 1);
  // As dbt's methods search: the fqn and resource_type methods the manifest's nodes only (a seed and a
  // source of the same name are not one node), the others its sources too.
  const parsed = [...manifest.nodes.values()].filter((n) => n.enabled);
  const others = [...manifest.others.values()].filter((n) => n.enabled);
  // dbt's all_nodes: the nodes, sources, exposures and metrics (state: and result: search these here).
  const all = [
    ...parsed,
    ...[...manifest.sources.values()].filter((n) => n.enabled),
    ...others.filter((n) => n.resourceType === 'exposure' || n.resourceType === 'metric'),
  ];
  // tag:, path:, file: and package: search dbt's all_nodes with the semantic models too from 1.6.4 (dbt-core
  // #8589, backported to 1.6.4: #8749 is tag: failing on them there) and the saved queries from 1.8 (where
  // all_nodes took them and the unit tests in): `+path:models/semantic` is what its semantic models are built on.
  const semanticModels = !dbtBefore1(manifest.dbtVersion, 6, 4);
  const savedQueries = !dbtBefore1(manifest.dbtVersion, 8);
  const allNodes = !semanticModels
    ? all
    : [
        ...all,
        ...others.filter(
          (n) => n.resourceType === 'semantic_model' || (n.resourceType === 'saved_query' && savedQueries),
        ),
      ];
  // dbt's non_source_nodes, which a name and fqn: search from 1.7 (1.6's searched the manifest's nodes only,
  // #8589's backport to 1.6.4 too; dbt 1.7.4's `dbt ls -s simple_model` lists its semantic model: dbt-core
  // #9389): the nodes, exposures, metrics, semantic models and saved queries, so `+revenue` (a metric) is what
  // the metric is built on.
  const nonSource = dbtBefore1(manifest.dbtVersion, 7)
    ? parsed
    : [...parsed, ...others.filter((n) => n.resourceType !== 'function')];
  // dbt 1.11's user-defined functions, which a name (fqn), file: and path: select too, as dbt's node selection
  // methods page says from 1.11 (`my_function+`, `file:my_function.sql`, `path:functions/my_function.sql`;
  // dbt-core #11968). It names no other method that sees them: those (tag:, package:, config.KEY:) do not here.
  const functions = dbtBefore1(manifest.dbtVersion, 11)
    ? []
    : others.filter((n) => n.resourceType === 'function');
  const named = functions.length === 0 ? nonSource : [...nonSource, ...functions];
  const located = functions.length === 0 ? allNodes : [...allNodes, ...functions];
  // dbt before 1.4 had path: skip every node whose root_path was not the project's (dbt-core #2258): a
  // package's `models/staging/x.sql` is no path of the project. 1.4 dropped root_path and the check with it
  // (dbt-core #6171).
  const root = manifest.projectName;
  const pathed = () =>
    root !== undefined && dbtBefore1(manifest.dbtVersion, 4)
      ? located.filter((n) => n.packageName === root)
      : located;
  // From 1.4 dbt globs the value in the root project's folder and selects a node whose file, a folder above it
  // or its .yml is among the paths found there: another package's node only by a path the root project has too
  // (`path:models/edr` selects none of a package's models/edr/ where the root project has no models/edr).
  const pathSelects = (n: ManifestNode): boolean =>
    pathMatches(
      n,
      value,
      ymls,
      root === undefined || n.packageName === root ? undefined : rootProjectPaths(manifest, root),
    );
  // dbt's parsed_nodes: its manifest's nodes, where the unit tests are not (gds reads them among the nodes).
  const configurable = () => parsed.filter((n) => n.resourceType !== 'unit_test');
  const pick = (test: (node: ManifestNode) => boolean, among: ManifestNode[] = all) =>
    new Set(among.filter(test).map((n) => n.uniqueId));
  // The methods' values are fnmatch globs from dbt 1.5 (dbt-core #6598); before, they compared exactly, and a
  // dotted part `*` of a source, exposure or metric stood for any.
  const wildcards = methodsTakeWildcards(manifest.dbtVersion);
  const like = wildcards ? glob : (pattern: string, text: string) => pattern === text;
  const part = wildcards ? glob : (pattern: string, text: string) => pattern === '*' || pattern === text;
  // Read once per method, not once per node.
  const stems = fileStems(manifest.dbtVersion);
  const ymls = pathsTakePatches(manifest.dbtVersion);
  const underscored = versionUnderscored(manifest.dbtVersion);
  if (value === '')
    throw new DbtSelectionError(`${atom}: the selector names nothing after the method`, selector);
  const since =
    method === undefined || !Object.hasOwn(METHODS_SINCE, method) ? undefined : METHODS_SINCE[method];
  if (since !== undefined && dbtBefore1(manifest.dbtVersion, since.minor, since.patch)) {
    const added = `1.${since.minor}${since.patch === undefined ? '' : `.${since.patch}`}`;
    throw new DbtSelectionError(
      `${atom}: dbt ${manifest.dbtVersion ?? ''}, which wrote the manifest, has no ${method ?? ''}: method (dbt ${added} added it${since.with === undefined ? '' : ` with ${since.with}`}) and refuses it, as gds does; ${since.instead?.(value) ?? `select by another method, or parse the project with dbt ${added} or later`}`,
      selector,
    );
  }
  switch (method) {
    // dbt's default method: a value with a slash is a path, one ending in .sql, .py or .csv a file name.
    // Before dbt 1.2 (no file method) a value ending in .sql is a name, as that dbt read it.
    case undefined:
      return value.includes('/')
        ? pick(pathSelects, pathed())
        : /\.(sql|py|csv)$/i.test(value) && !dbtBefore1(manifest.dbtVersion, 2)
          ? pick((n) => fileMatches(n, value, like, stems), located)
          : pick((n) => fqnMatches(n, value, wildcards, underscored), named);
    case 'fqn':
      return pick((n) => fqnMatches(n, value, wildcards, underscored), named);
    case 'tag':
      return pick((n) => n.tags.some((t) => like(value, t)), allNodes);
    case 'path':
      return pick(pathSelects, pathed());
    // dbt's file method compares the file's name alone: `file:models/x.sql` matches nothing (path: does).
    case 'file':
      return pick((n) => fileMatches(n, value, like, stems), located);
    case 'source': {
      const parts = value.split('.');
      if (parts.length > 3)
        throw new DbtSelectionError(
          `${atom}: a source is source:NAME, source:NAME.TABLE or source:PACKAGE.NAME.TABLE`,
          selector,
        );
      const [pkg, name, table] = parts.length === 3 ? parts : ['*', parts[0] ?? '', parts[1] ?? '*'];
      return pick(
        (n) =>
          n.resourceType === 'source' &&
          part(pkg ?? '*', n.packageName) &&
          part(name ?? '', n.sourceName ?? '') &&
          part(table ?? '*', n.name),
      );
    }
    case 'state': {
      if (!STATE_SELECTORS.includes(value))
        throw new DbtSelectionError(
          `${atom}: dbt's state selectors are ${STATE_SELECTORS.map((s) => `state:${s}`).join(', ')}`,
          selector,
        );
      const state = context.state;
      if (state === undefined)
        throw new DbtSelectionError(
          `${atom} compares the project with another manifest: pass --state DIR, the folder of the production manifest.json (dbt's --state)`,
          selector,
        );
      // dbt 1.8's StateSelectorMethod compares the semantic models and saved queries of its all_nodes too
      // (their same_contents; state.ts). Before 1.8 gds leaves them out: 1.6.4 to 1.7 searched the semantic
      // models, but took every one for modified until a 1.7 patch (dbt-core #9548, #9549).
      return pick(
        (n) => stateMatches(value, n, manifest, state),
        savedQueries
          ? [
              ...all,
              ...others.filter(
                (n) => n.resourceType === 'semantic_model' || n.resourceType === 'saved_query',
              ),
            ]
          : all,
      );
    }
    // dbt 1.12's selector method: what the named selector of selectors.yml selects (graph operators then
    // walk from it, as from any method's nodes).
    case 'selector': {
      const entry = manifest.selectors.get(value);
      if (entry === undefined)
        throw new DbtSelectionError(
          `${atom}: no selector ${JSON.stringify(value)} in the project's selectors.yml (manifest.json names ${[...manifest.selectors.keys()].join(', ') || 'none'})`,
          selector,
        );
      if (evaluating.has(value))
        throw new DbtSelectionError(`${atom}: the selector ${value} names itself`, selector);
      evaluating.add(value);
      try {
        return evaluateDefinition(entry.definition, context, testsSelectModels, [value]).direct;
      } finally {
        evaluating.delete(value);
      }
    }
    case 'result': {
      const results = context.previous.results;
      if (results === undefined)
        throw new DbtSelectionError(
          `${atom} selects by the results of an earlier run: pass --state DIR, the folder holding that run's run_results.json (dbt's --state${context.state === undefined ? '' : '; the --state folder holds none'})`,
          selector,
        );
      return pick((n) => results.get(n.uniqueId) === value);
    }
    case 'source_status': {
      const { sources, sourcesCurrent } = context.previous;
      if (sources === undefined || sourcesCurrent === undefined) {
        const missing = [
          ...(sources === undefined
            ? ["the earlier run's sources.json in the --state folder (pass --state DIR)"]
            : []),
          ...(sourcesCurrent === undefined
            ? ["the latest run's target/sources.json (run dbt source freshness)"]
            : []),
        ];
        throw new DbtSelectionError(
          `${atom} compares two runs of dbt source freshness, and ${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} missing (dbt refuses it too)`,
          selector,
        );
      }
      const fresher = sourcesWithStatus(value, sources, sourcesCurrent);
      return pick((n) => fresher.has(n.uniqueId));
    }
    // dbt's group method: config.group against the value, of the nodes (not the unit tests) and metrics;
    // exactly before dbt 1.8, a glob from 1.8 (dbt-core #9811, in 1.8.0b3: the 1.8.0 prereleases before it
    // compared exactly), though the other methods took globs from 1.5.
    case 'group': {
      const exact =
        dbtBefore1(manifest.dbtVersion, 8) || GROUP_EXACT_PRERELEASES.test(manifest.dbtVersion ?? '');
      const groupLike = exact ? (p: string, t: string) => p === t : glob;
      return pick(
        (n) => n.group !== undefined && groupLike(value, n.group),
        [...configurable(), ...others.filter((n) => n.resourceType === 'metric')],
      );
    }
    // dbt's access method: a model's access exactly.
    case 'access':
      return pick((n) => n.resourceType === 'model' && n.access === value, parsed);
    // dbt's resource_type method compares the value as it is: no glob.
    case 'resource_type':
      if (!DBT_RESOURCE_TYPES.includes(value))
        throw new DbtSelectionError(
          `${atom}: dbt's resource types are ${DBT_RESOURCE_TYPES.join(', ')} (function from dbt 1.11; dbt refuses any other)`,
          selector,
        );
      // dbt 1.11 added the function type (user-defined functions, the manifest's `functions`; dbt-core #11958),
      // 1.8 unit_test and fixture, 1.7 saved_query, 1.6 semantic_model, 1.5 group.
      if (Object.hasOwn(RESOURCE_TYPES_SINCE, value)) {
        const minor = RESOURCE_TYPES_SINCE[value] as number;
        if (dbtBefore1(manifest.dbtVersion, minor))
          throw new DbtSelectionError(
            `${atom}: dbt ${manifest.dbtVersion ?? ''}, which wrote the manifest, has no resource type ${value} (dbt 1.${minor} added it) and refuses it, as gds does; its resource types are ${DBT_RESOURCE_TYPES.filter((type) => !dbtBefore1(manifest.dbtVersion, RESOURCE_TYPES_SINCE[type] ?? 0)).join(', ')}`,
            selector,
          );
      }
      if (value === 'function') return pick((n) => n.resourceType === value, others);
      // From dbt 1.6.4 (dbt-core #8589, backported) the method searches dbt's all_nodes: `resource_type:source+`
      // is what reads a source, `+resource_type:exposure` what the exposures are built on (dbt-core #8730;
      // 1.6.3 and 1.5.9 selected nothing by them), and dbt 1.7's all_nodes holds no saved query (1.7's
      // selector_methods.py: `resource_type:saved_query` selects nothing there). Before, the manifest's nodes only.
      return pick((n) => n.resourceType === value, dbtBefore1(manifest.dbtVersion, 6, 4) ? parsed : allNodes);
    // dbt 1.8's `package:this` is the root project (dbt-core #6891): the manifest's project_name.
    case 'package': {
      const root = manifest.projectName;
      const name =
        value === 'this' && root !== undefined && !dbtBefore1(manifest.dbtVersion, 8) ? root : value;
      return pick((n) => like(name, n.packageName), allNodes);
    }
    case 'version': {
      if (!VERSION_SELECTORS.includes(value))
        throw new DbtSelectionError(
          `${atom}: dbt's version selectors are version:latest, prerelease, old or none (dbt refuses any other)`,
          selector,
        );
      return pick((n) => n.resourceType === 'model' && versionMatches(value, n), parsed);
    }
    // dbt's exposure, metric, semantic_model and saved_query methods: NAME or PACKAGE.NAME, globs allowed.
    case 'exposure':
    case 'metric':
    case 'semantic_model':
    case 'saved_query': {
      const parts = value.split('.');
      if (parts.length > 2)
        throw new DbtSelectionError(
          `${atom}: a ${method} is ${method}:NAME or ${method}:PACKAGE.NAME`,
          selector,
        );
      const [pkg, name] = parts.length === 2 ? parts : ['*', parts[0] ?? ''];
      return pick(
        (n) => n.resourceType === method && part(pkg ?? '*', n.packageName) && part(name ?? '', n.name),
        others,
      );
    }
    // dbt 1.8's unit_test method: a unit test by NAME or PACKAGE.NAME, globs allowed (before 1.8 dbt has no
    // such method and refuses it: METHODS_SINCE).
    case 'unit_test': {
      const parts = value.split('.');
      if (parts.length > 2)
        throw new DbtSelectionError(
          `${atom}: a unit test is unit_test:NAME or unit_test:PACKAGE.NAME`,
          selector,
        );
      const [pkg, name] = parts.length === 2 ? parts : ['*', parts[0] ?? ''];
      return pick(
        (n) => n.resourceType === 'unit_test' && glob(pkg ?? '*', n.packageName) && glob(name ?? '', n.name),
        parsed,
      );
    }
    // dbt's test_name: a generic test by its test's name (`unique`, `accepted_values`; the name alone, never
    // the package: `dbt_utils.expression_is_true` is none), a unit test by its own. dbt Fusion's generic tests
    // without test_metadata by the test their name says (`dbt_utils_expression_is_true_…`: expression_is_true).
    case 'test_name': {
      const fusion = writtenByFusion(manifest.dbtVersion);
      return pick((n) => {
        if (n.resourceType === 'unit_test') return glob(value, n.name);
        if (n.resourceType !== 'test') return false;
        const name =
          n.test?.name ??
          (fusionGenericTest(n, fusion) ? testNamedBy(n, manifest.testMacros)?.name : undefined);
        return name !== undefined && like(value, name);
      });
    }
    // dbt's test_type: generic (schema), singular, data or unit. `data` was singular's old name until dbt 1.8
    // made it every data test, generic and singular (dbt-core #9052; the docs' `dbt test --select
    // test_type:data`, "run only data tests").
    case 'test_type': {
      const kind = value === 'data' && !dataMeansSingular(manifest.dbtVersion) ? 'data' : TEST_KINDS[value];
      if (kind === undefined)
        throw new DbtSelectionError(
          `${atom}: dbt's test types are test_type:generic (or schema), singular, data (generic and singular; singular before dbt 1.8) and unit`,
          selector,
        );
      // A generic test dbt Fusion wrote without test_metadata is generic still.
      const fusion = writtenByFusion(manifest.dbtVersion);
      return pick((n) =>
        kind === 'unit'
          ? n.resourceType === 'unit_test'
          : n.resourceType === 'test' &&
            (kind === 'data' ||
              (n.test?.name !== undefined || fusionGenericTest(n, fusion)) === (kind === 'generic')),
      );
    }
    default: {
      // dbt's config method, `config.KEY.SUBKEY…:value`: the nodes and sources (tests too) whose config holds it.
      if (method.startsWith('config.')) {
        const keys = method.slice('config.'.length).split('.');
        const compared = typed ?? value;
        const since13 = !dbtBefore1(manifest.dbtVersion, 3);
        return pick(
          (n) => configSelects(configValue(n, keys, manifest, atom, selector), compared, keys, since13),
          [...configurable(), ...[...manifest.sources.values()].filter((n) => n.enabled)],
        );
      }
      throw new DbtSelectionError(
        `${atom}: gds does not know the selector method "${method}"; it reads ${SELECTOR_METHODS.map((m) => `${m}:`).join(', ')}, names and graph operators (+x, x+, 2+x, @x)`,
        selector,
      );
    }
  }
}

/** The selectors a `selector:` method is evaluating (one naming itself, at any depth, is refused). */
const evaluating = new Set<string>();

/** A value a config selector compares: a CLI's text, or what a YAML selector wrote. */
type ConfigScalar = string | number | boolean;

/** Nothing there: dbt's _getattr_descend fails, and the node is not selected. */
const ABSENT = Symbol('absent');

/** The config value at `keys` (dbt's _getattr_descend: each key an attribute or member), or ABSENT. */
function configValue(
  node: ManifestNode,
  keys: string[],
  manifest: Manifest,
  atom: string,
  selector: string,
): unknown {
  const config = node.config;
  if (config === undefined) {
    // The reader kept no config: `materialized` is a field of its own (a test's is always dbt's `test`).
    if (keys.length === 1 && keys[0] === 'materialized')
      return node.materialized ?? (node.resourceType === 'test' ? 'test' : ABSENT);
    if (manifest.withoutConfigs === true)
      throw new DbtSelectionError(
        `${atom}: the manifest was read without its nodes' configs, which gds keeps only for a selection that compares them`,
        selector,
      );
    return ABSENT;
  }
  let value: unknown = config;
  for (const key of keys) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, key))
      return ABSENT;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/**
 * dbt's ConfigSelectorMethod: the value equals the config's as Python compares them (a text only a text, a
 * number or boolean only a number or boolean), or is one of a list's items; `true` and `false` in any case
 * select a boolean config; `config.severity:` compares without case. The lists and the texts `true` and
 * `false` are dbt 1.3's (`listsAndBooleans`; dbt-core #5889): before, the value had to equal the config,
 * so `config.tags:nightly` and `config.full_refresh:true` selected nothing.
 */
function configSelects(
  config: unknown,
  selected: ConfigScalar,
  keys: string[],
  listsAndBooleans = true,
): boolean {
  if (config === ABSENT) return false;
  const selectedText = typeof selected === 'boolean' ? (selected ? 'True' : 'False') : String(selected);
  const severity = keys.length === 1 && keys[0] === 'severity';
  const equals = (item: unknown): boolean => {
    if (severity) return typeof item === 'string' && item.toUpperCase() === selectedText.toUpperCase();
    if (typeof item === 'string') return typeof selected === 'string' && item === selected;
    if (typeof item === 'number' || typeof item === 'boolean')
      return typeof selected !== 'string' && Number(item) === Number(selected);
    return false;
  };
  if (!listsAndBooleans) return !Array.isArray(config) && equals(config);
  // `true`/`false` select a boolean config (`value is True`), or a list holding one (`True in value`, where
  // Python's 1 equals True).
  const bool =
    selectedText.toUpperCase() === 'TRUE' ? 1 : selectedText.toUpperCase() === 'FALSE' ? 0 : undefined;
  if (!Array.isArray(config)) return equals(config) || (bool !== undefined && config === (bool === 1));
  return (config as unknown[]).some(
    (item) =>
      equals(item) ||
      (bool !== undefined &&
        (typeof item === 'boolean' || typeof item === 'number') &&
        Number(item) === bool),
  );
}

/**
 * The selector methods a dbt 1.x added (dbt-core's MethodName), by the minor version that added them: an
 * older dbt refuses them as unknown methods, and gds does on its manifest. The others (fqn, tag, path,
 * source, package, config, test_name, test_type, resource_type, state, exposure) are older than the
 * manifests gds reads. docs/dbt.md has the table.
 */
const METHODS_SINCE: Readonly<
  Record<string, { minor: number; patch?: number; with?: string; instead?: (value: string) => string }>
> = {
  metric: { minor: 0, with: 'metrics' },
  // dbt-core #4017, merged after 0.21.0.
  result: { minor: 0, with: 'run results selection' },
  source_status: { minor: 1 },
  file: { minor: 2, instead: () => 'select the model by its name (no extension) or path:' },
  group: { minor: 5, with: 'groups' },
  access: { minor: 5, with: 'model access' },
  version: { minor: 5, with: 'model versions' },
  // dbt-core #8589 (1.7), backported to 1.6.4 (dbt-core #8749: tag: broke on semantic models from 1.6.4).
  semantic_model: { minor: 6, patch: 4, with: 'semantic models' },
  saved_query: { minor: 7, with: 'saved queries' },
  unit_test: { minor: 8, with: 'unit tests' },
  selector: { minor: 12, instead: (value) => `pass --selector ${value}` },
};

const VERSION_SELECTORS = ['latest', 'prerelease', 'old', 'none'];

const TEST_KINDS: Readonly<Record<string, 'generic' | 'singular' | 'unit'>> = {
  generic: 'generic',
  schema: 'generic',
  singular: 'singular',
  data: 'singular',
  unit: 'unit',
};

/**
 * Whether the manifest's dbt is older than 1.`minor`.`patch` (0.x is); an unknown version is taken as a newer
 * one, and a prerelease as its release.
 */
export function dbtBefore1(dbtVersion: string | undefined, minor: number, patch = 0): boolean {
  const match = /^(\d+)\.(\d+)(?:\.(\d+))?/.exec(dbtVersion ?? '');
  if (match === null) return false;
  const major = Number(match[1]);
  const written = Number(match[2]);
  return (
    major === 0 || (major === 1 && (written < minor || (written === minor && Number(match[3] ?? 0) < patch)))
  );
}

/** The prereleases of dbt 1.8.0 whose group: compared exactly (1.8.0b3 added its glob: dbt-core #9811). */
const GROUP_EXACT_PRERELEASES = /^1\.8\.0-?(?:a\d+|b[12])$/;

/** Whether the manifest's dbt reads the methods' values as fnmatch globs (1.5 and later; unknown: yes). */
const methodsTakeWildcards = (dbtVersion: string | undefined) => !dbtBefore1(dbtVersion, 5);

/** Whether the file method compares a file's stem too (dbt 1.6 and later; unknown: yes). */
const fileStems = (dbtVersion: string | undefined) => !dbtBefore1(dbtVersion, 6);

/**
 * Whether a versioned model answers to `name_vN` too (dbt 1.6+, dbt-core #7995; dbt 1.5 selected only
 * `name.vN`: dbt-core #7639). Unknown: yes.
 */
const versionUnderscored = (dbtVersion: string | undefined) => !dbtBefore1(dbtVersion, 6);

/** Whether test_type:data is singular's old name (dbt before 1.8), not every data test; unknown: 1.8+. */
const dataMeansSingular = (dbtVersion: string | undefined) => dbtBefore1(dbtVersion, 8);

/** dbt's UnparsedVersion order: as numbers when both are, else as texts. */
function compareVersions(a: string, b: string): number {
  const [x, y] = [Number(a), Number(b)];
  if (a.trim() !== '' && b.trim() !== '' && !Number.isNaN(x) && !Number.isNaN(y)) return x - y;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** dbt's VersionSelectorMethod: a model's version against its latest_version. */
function versionMatches(selector: string, node: ManifestNode): boolean {
  const { version, latestVersion } = node;
  if (selector === 'none') return version === undefined;
  if (selector === 'latest') return version !== undefined && version === latestVersion;
  if (version === undefined || latestVersion === undefined) return false;
  const order = compareVersions(version, latestVersion);
  return selector === 'prerelease' ? order > 0 : order < 0;
}

/**
 * dbt's file method (dbt 1.2+): the file's name, and with `stems` (dbt 1.6+: fileStems) its stem too (the
 * name without its extension); globs from 1.5, as `like` compares.
 */
function fileMatches(node: ManifestNode, value: string, like: typeof glob, stems: boolean): boolean {
  const name = node.originalFilePath?.split('/').at(-1);
  if (name === undefined) return false;
  return like(value, name) || (stems && like(value, name.replace(/\.[^.]*$/, '')));
}

/**
 * Whether path: selects a node by the .yml that documents it, its patch_path (dbt-core #7321, April 2023: dbt
 * 1.5; unknown: yes). Before, a model's .yml selected its tests and sources only.
 */
const pathsTakePatches = (dbtVersion: string | undefined) => !dbtBefore1(dbtVersion, 5);

/**
 * dbt's path method: the value is a glob of paths in the project (pathlib's: `*` within one folder, `**`
 * any folders), and a node is selected by its file, by a folder above it, or (`patches`: dbt 1.5+) by the
 * .yml that documents it. With `inRoot` (a node of another package) only by such a path the root project's
 * folder holds too, where dbt's glob looks.
 */
function pathMatches(
  node: ManifestNode,
  value: string,
  patches = true,
  inRoot?: ReadonlySet<string>,
): boolean {
  const pattern = value
    .replace(/^(\.\/)+/, '')
    .split('/')
    .filter((part) => part !== '' && part !== '.');
  if (pattern.length === 0) return false;
  const file = node.originalFilePath;
  if (file !== undefined) {
    const parts = file.split('/');
    if (inRoot === undefined) {
      if (pathGlob(pattern, parts, true)) return true;
    } else
      for (let length = 0; length <= parts.length; length++) {
        const prefix = parts.slice(0, length);
        if (inRoot.has(prefix.join('/')) && pathGlob(pattern, prefix, false)) return true;
      }
  }
  return (
    patches &&
    node.patchPath !== undefined &&
    (inRoot === undefined || inRoot.has(node.patchPath)) &&
    pathGlob(pattern, node.patchPath.split('/'), false)
  );
}

const rootPathsCache = new WeakMap<Manifest, ReadonlySet<string>>();

/**
 * The paths gds knows the root project's folder holds: the file of each of its nodes (sources, tests,
 * exposures… too), the .yml that documents one, and every folder above them ('' is the folder itself).
 */
function rootProjectPaths(manifest: Manifest, root: string): ReadonlySet<string> {
  const cached = rootPathsCache.get(manifest);
  if (cached !== undefined) return cached;
  const paths = new Set<string>(['']);
  const add = (path: string | undefined) => {
    if (path === undefined) return;
    const parts = path.split('/');
    for (let length = 1; length <= parts.length; length++) paths.add(parts.slice(0, length).join('/'));
  };
  const addNode = (node: ManifestNode) => {
    if (node.packageName !== root) return;
    add(node.originalFilePath);
    add(node.patchPath);
  };
  manifest.nodes.forEach(addNode);
  manifest.sources.forEach(addNode);
  manifest.others.forEach(addNode);
  rootPathsCache.set(manifest, paths);
  return paths;
}

/** Whether the glob's parts from `p` match the path's from `i` (`within`: or a folder above the path). */
function pathGlob(pattern: string[], path: string[], within: boolean, p = 0, i = 0): boolean {
  const head = pattern[p];
  if (head === undefined) return i === path.length || within;
  if (head === '**') {
    for (let skipped = i; skipped <= path.length; skipped++)
      if (pathGlob(pattern, path, within, p + 1, skipped)) return true;
    return false;
  }
  const part = path[i];
  return part !== undefined && glob(head, part) && pathGlob(pattern, path, within, p + 1, i + 1);
}

/** dbt's fqn method: the selector against the node's fqn, or against it without the package name. */
function fqnMatches(node: ManifestNode, value: string, wildcards: boolean, underscored: boolean): boolean {
  const versioned = node.version !== undefined;
  return (
    isSelectedNode(node.fqn, value, versioned, wildcards, underscored) ||
    isSelectedNode(node.fqn.slice(1), value, versioned, wildcards, underscored)
  );
}

/**
 * dbt-core's is_selected_node. The fqn's leaf (a versioned model: the part before its version, or the two
 * joined by `_`, `dim_customers_v2`, from dbt 1.6) equals the selector; or the selector's dotted parts are a prefix of the
 * fqn, each part equal until the first with a wildcard, from which on the rest of the selector is one
 * fnmatch over the rest of the dotted fqn (`*` spans dots: `marts.*.fct_*` reaches marts/finance/sub/).
 */
function isSelectedNode(
  fqn: string[],
  selector: string,
  versioned: boolean,
  wildcards: boolean,
  underscored: boolean,
): boolean {
  const parts = selector.split('.');
  if (versioned) {
    if (fqn.at(-2) === selector) return true;
    // dbt 1.5 took `name_vN` for no version (dbt-core #7639), only `name.vN`.
    const joint = underscored ? '_' : '.';
    if (fqn.slice(-2).join(joint) === parts.slice(-2).join(joint)) return true;
  } else if (fqn.at(-1) === selector) return true;
  const flat = fqn.flatMap((segment) => segment.split('.'));
  if (flat.length < parts.length) return false;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as string;
    // Before dbt 1.5 only a whole part `*` was a wildcard, and it selected whatever followed.
    if (!wildcards) {
      if (part === '*') return true;
    } else if (/[*?[\]]/.test(part)) return glob(parts.slice(i).join('.'), flat.slice(i).join('.'));
    if (flat[i] !== part) return false;
  }
  return true;
}

/** fnmatch: `*`, `?` and `[…]`, the whole text. */
function glob(pattern: string, text: string): boolean {
  if (!/[*?[]/.test(pattern)) return pattern === text;
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] ?? '';
    if (c === '*') source += '.*';
    else if (c === '?') source += '.';
    else if (c === '[') {
      // fnmatch.translate: `[!…]` negates (`[^…]` is a class holding `^`), and a `]` first in the class is
      // one of its characters.
      let from = i + 1;
      if (pattern[from] === '!') from += 1;
      if (pattern[from] === ']') from += 1;
      const end = pattern.indexOf(']', from);
      if (end < 0) source += '\\[';
      else {
        const inside = pattern.slice(i + 1, end).replace(/[\\\]]/g, '\\$&');
        source += inside.startsWith('!')
          ? `[^${inside.slice(1)}]`
          : inside.startsWith('^') || inside.startsWith('[')
            ? `[\\${inside}]`
            : `[${inside}]`;
        i = end;
      }
    } else source += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`, 's').test(text);
}

/** What a selection's methods read besides the manifest, so that a reader keeps or reads only what they need. */
export interface SelectionReads {
  /** `config.KEY:` other than `config.materialized:`: each node's config (ManifestReader's `configs`). */
  configs: boolean;
  /** `result:`: the --state folder's run_results.json. */
  results: boolean;
  /** `source_status:`: the sources.json of the --state folder and of the project's target/. */
  freshness: boolean;
}

/**
 * What the selection may read (more than it does, never less): its --select and --exclude, or the YAML
 * selector it uses (`--selector NAME`, with neither the selectors.yml default) and those it names. Without
 * `selectors` (the manifest not yet read) a YAML selector is not looked into: ask again once it is read.
 */
export function selectionReads(selection: DbtSelection, selectors?: Manifest['selectors']): SelectionReads {
  const texts = [...(selection.select ?? []), ...(selection.exclude ?? [])];
  if (selectors !== undefined) {
    const used = new Set<string>();
    const use = (name: string | undefined) => {
      const entry = name === undefined ? undefined : selectors.get(name);
      if (name === undefined || entry === undefined || used.has(name)) return;
      used.add(name);
      texts.push(JSON.stringify(entry.definition) ?? '');
      namedSelectors(entry.definition).forEach(use);
    };
    // dbt 1.12's selector:NAME in --select or --exclude.
    for (const text of [...texts]) for (const [, name] of text.matchAll(/\bselector:([^\s,+]+)/g)) use(name);
    if (selection.selector !== undefined || texts.length === 0)
      use(selection.selector ?? [...selectors].find(([, entry]) => entry.default)?.[0]);
  }
  const text = texts.join('\n');
  return {
    configs: /config\.(?!materialized["':])/.test(text),
    results: /\bresult["':]/.test(text),
    freshness: /\bsource_status["':]/.test(text),
  };
}

/** The selectors a selectors.yml definition names (`method: selector`, or `selector: NAME`). */
function namedSelectors(definition: unknown): string[] {
  if (Array.isArray(definition)) return definition.flatMap(namedSelectors);
  if (!isDict(definition)) return [];
  const keys = Object.keys(definition);
  const named =
    definition['method'] === 'selector'
      ? [String(definition['value'])]
      : keys.length === 1 && keys[0] === 'selector'
        ? [String(definition['selector'])]
        : [];
  return [...named, ...Object.values(definition).flatMap(namedSelectors)];
}
