// dbt's `state:` selectors: a node of the project compared with the node of the same unique id in another
// manifest (`--state DIR`, typically production's), field by field as dbt-core's StateSelectorMethod does.
// `state:modified` is new, or a change of body (the raw SQL; a seed's file checksum), configs (the
// unrendered config but database, schema, alias, tags and group), relation (those three), fqn, persisted descriptions
// (only under persist_docs), contract (only when one side enforces it) or of a macro the node calls. A
// source (dbt's SourceDefinition.same_contents) is modified by a change of its relation (database, schema,
// identifier), fqn, configs, quoting, freshness, loaded_at_field or external table; not of its description.
// A generic test (dbt's GenericTestNode.same_contents) by a change of its config or fqn; a singular test as
// a model is. An exposure or metric (dbt's Exposure and Metric.same_contents) by a change of its
// properties, parents or fqn; a semantic model or saved query (dbt 1.8's all_nodes) by a change of its
// properties alone. A new source, exposure, metric, semantic model or saved query is not modified (those
// same_contents take a node with no old one for the same), a new model, seed, snapshot or test is.
import type { Manifest, ManifestNode } from './manifest.js';
import { canonicalJson as canonical, LINEAGE_NOT_COMPARED } from './manifest.js';

export const STATE_SELECTORS = [
  'new',
  'old',
  'modified',
  'unmodified',
  'modified.body',
  'modified.configs',
  'modified.relation',
  'modified.persisted_descriptions',
  'modified.contract',
  'modified.macros',
];

const RELATION_KEYS = ['database', 'schema', 'alias'];
/** The config keys dbt's configs comparison leaves out (CompareBehavior.Exclude): the relation, tags, group. */
const NOT_COMPARED_CONFIG_KEYS = [...RELATION_KEYS, 'tags', 'group'];

function sameBody(node: ManifestNode, old: ManifestNode): boolean {
  const [now, then] = [node.state, old.state];
  if (node.resourceType !== 'seed' && (now.rawCode !== undefined || then.rawCode !== undefined))
    return now.rawCode === then.rawCode;
  return now.checksum === then.checksum;
}

function sameConfig(node: ManifestNode, old: ManifestNode): boolean {
  const without = (config: Record<string, unknown>) =>
    canonical(
      Object.fromEntries(Object.entries(config).filter(([k]) => !NOT_COMPARED_CONFIG_KEYS.includes(k))),
    );
  return without(node.state.unrenderedConfig) === without(old.state.unrenderedConfig);
}

/** A source's relation is its database, schema and identifier as written; a model's, as configured. */
function sameRelation(node: ManifestNode, old: ManifestNode): boolean {
  if (node.resourceType === 'source')
    return node.database === old.database && node.schema === old.schema && node.identifier === old.identifier;
  return RELATION_KEYS.every(
    (key) => canonical(node.state.unrenderedConfig[key]) === canonical(old.state.unrenderedConfig[key]),
  );
}

function samePersistedDescriptions(node: ManifestNode, old: ManifestNode): boolean {
  const { persistDocs, descriptions } = node.state;
  if (persistDocs.relation && descriptions.relation !== old.state.descriptions.relation) return false;
  if (persistDocs.columns && canonical(descriptions.columns) !== canonical(old.state.descriptions.columns))
    return false;
  return true;
}

function sameContract(node: ManifestNode, old: ManifestNode): boolean {
  if (!node.contractEnforced && !old.contractEnforced) return true;
  if (node.contractEnforced !== old.contractEnforced) return false;
  const [now, then] = [node.state.contractChecksum, old.state.contractChecksum];
  if (now !== undefined && then !== undefined) return now === then;
  return node.state.contractShape === old.state.contractShape;
}

/** The macros whose SQL differs between the manifests, or that only one of them has. */
function modifiedMacros(manifest: Manifest, state: Manifest): Set<string> {
  const changed = new Set<string>();
  for (const [id, macro] of manifest.macros) if (state.macros.get(id)?.sql !== macro.sql) changed.add(id);
  for (const id of state.macros.keys()) if (!manifest.macros.has(id)) changed.add(id);
  return changed;
}

const macroCache = new WeakMap<Manifest, WeakMap<Manifest, Set<string>>>();

function callsModifiedMacro(node: ManifestNode, manifest: Manifest, state: Manifest): boolean {
  let byState = macroCache.get(manifest);
  if (byState === undefined) macroCache.set(manifest, (byState = new WeakMap()));
  let changed = byState.get(state);
  if (changed === undefined) byState.set(state, (changed = modifiedMacros(manifest, state)));
  if (changed.size === 0) return false;
  const seen = new Set<string>();
  const pending = [...node.state.macros];
  while (pending.length > 0) {
    const id = pending.pop() as string;
    if (seen.has(id)) continue;
    seen.add(id);
    if (changed.has(id)) return true;
    pending.push(...(manifest.macros.get(id)?.dependsOn ?? []));
  }
  return false;
}

function modified(node: ManifestNode, old: ManifestNode, manifest: Manifest, state: Manifest): boolean {
  // dbt's Exposure.same_contents and Metric.same_contents: their properties, parents and fqn; a semantic
  // model's and a saved query's (dbt 1.8), their properties alone.
  if (node.state.contents !== undefined)
    return (
      node.state.contents !== old.state.contents ||
      (!LINEAGE_NOT_COMPARED.has(node.resourceType) && node.fqn.join('.') !== old.fqn.join('.'))
    );
  // dbt's GenericTestNode.same_contents: its config and fqn (its body is the call of its generic test, and
  // its arguments are in its name, so in its unique id), besides the macros it calls.
  if (node.resourceType === 'test' && node.test?.name !== undefined)
    return (
      !sameConfig(node, old) ||
      node.fqn.join('.') !== old.fqn.join('.') ||
      callsModifiedMacro(node, manifest, state)
    );
  if (node.resourceType === 'source')
    return (
      !sameRelation(node, old) ||
      node.fqn.join('.') !== old.fqn.join('.') ||
      !sameConfig(node, old) ||
      node.state.sourceProperties !== old.state.sourceProperties
    );
  return (
    !sameBody(node, old) ||
    !sameConfig(node, old) ||
    !samePersistedDescriptions(node, old) ||
    node.fqn.join('.') !== old.fqn.join('.') ||
    !sameRelation(node, old) ||
    !sameContract(node, old) ||
    callsModifiedMacro(node, manifest, state)
  );
}

/** The state selectors whose comparison (same_body, same_persisted_description, same_contract) a dbt source lacks. */
const SOURCES_HAVE_NONE = new Set(['modified.body', 'modified.persisted_descriptions', 'modified.contract']);
/** Those an exposure or metric lacks: the source's, and same_database_representation. */
const OTHERS_HAVE_NONE = new Set([...SOURCES_HAVE_NONE, 'modified.relation']);

/** Whether `state:<selector>` selects the node, compared with its namesake in the `state` manifest. */
export function stateMatches(
  selector: string,
  node: ManifestNode,
  manifest: Manifest,
  state: Manifest,
): boolean {
  const old =
    state.nodes.get(node.uniqueId) ?? state.sources.get(node.uniqueId) ?? state.others.get(node.uniqueId);
  if (selector === 'new') return old === undefined;
  if (selector === 'old') return old !== undefined;
  // dbt's modified.macros looks at the node's macros alone, whether or not the node is new.
  if (selector === 'modified.macros') return callsModifiedMacro(node, manifest, state);
  // dbt compares these by methods a source does not have, so a source is never one of them, new or not.
  if (node.resourceType === 'source' && SOURCES_HAVE_NONE.has(selector)) return false;
  if (node.state.contents !== undefined && OTHERS_HAVE_NONE.has(selector)) return false;
  if (old === undefined) {
    // dbt's SourceDefinition, Exposure and Metric.same_contents take one with no namesake in the state
    // manifest for the same (`if old is None: return True`): a new source, exposure or metric is no
    // state:modified (and is state:unmodified) but by a macro it calls; new, a model, seed, snapshot or
    // test is modified (and each node is new, and modified.configs and modified.relation where it has them).
    if (
      (selector === 'modified' || selector === 'unmodified') &&
      (node.resourceType === 'source' || node.state.contents !== undefined)
    )
      return callsModifiedMacro(node, manifest, state) === (selector === 'modified');
    return selector !== 'unmodified';
  }
  switch (selector) {
    case 'modified':
      return modified(node, old, manifest, state);
    case 'unmodified':
      return !modified(node, old, manifest, state);
    case 'modified.body':
      return !sameBody(node, old);
    case 'modified.configs':
      return !sameConfig(node, old);
    case 'modified.relation':
      return !sameRelation(node, old);
    case 'modified.persisted_descriptions':
      return !samePersistedDescriptions(node, old);
    case 'modified.contract':
      return !sameContract(node, old);
    default:
      return false;
  }
}
