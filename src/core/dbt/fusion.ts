// dbt Fusion (dbt 2) writes some generic tests without test_metadata (dbt-fusion #1575, #1243): such a test
// is told from a singular one by where Fusion writes its SQL, and its generic test by the name dbt gave it.
import type { ManifestNode } from './manifest.js';

/**
 * Where dbt Fusion writes the SQL of a generic test: its target folder's generic_tests/ (a singular test's file
 * is the user's own, under tests/, where a folder of that name may be too).
 */
const FUSION_GENERIC_FILE = /^(?:target\/)?generic_tests\//;

/** Whether dbt Fusion (dbt 2) wrote the manifest: only its generic tests may lack test_metadata. */
export const writtenByFusion = (dbtVersion: string | undefined): boolean =>
  Number.parseInt(dbtVersion ?? '', 10) >= 2;

/** Whether a test without test_metadata is a generic test dbt Fusion wrote, not a singular test. */
export const fusionGenericTest = (node: ManifestNode, fusion: boolean): boolean =>
  fusion && node.test?.name === undefined && FUSION_GENERIC_FILE.test(node.originalFilePath ?? '');

/** dbt's own generic tests: where a name splits more than one way, the split that names one of them. */
const DBT_GENERIC_TESTS: ReadonlySet<string> = new Set([
  'not_null',
  'unique',
  'accepted_values',
  'relationships',
]);

/** The generic test a name says: its name, as dbt-core's test_metadata.name, and its package (namespace). */
export interface NamedTest {
  name: string;
  namespace?: string;
}

/**
 * The generic test a test's name says, as dbt names one (synthesize_generic_test_names):
 * `<test>_<target>_<arguments>`, the target a parent model's name (`<name>_v<N>` for a version), or
 * `source_<test>_<source>_<table>_…` for a source's. A namespaced test's `<test>` keeps its package
 * (`dbt_utils_expression_is_true`): `testMacros` (Manifest.testMacros, `dbt_utils.expression_is_true`) tell
 * its name (`expression_is_true`) from its package, as dbt-core's test_metadata does. Undefined: the name
 * follows none of its parents.
 */
export function testNamedBy(node: ManifestNode, testMacros: ReadonlySet<string>): NamedTest | undefined {
  const parents = new Set(node.dependsOn.filter((id) => !id.startsWith('macro.')));
  if (node.test?.attachedNode !== undefined) parents.add(node.test.attachedNode);
  const found: string[] = [];
  for (const parent of parents) {
    const [type, , name, version] = parent.split('.');
    const source = type === 'source';
    const target = source
      ? `${name ?? ''}_${version ?? ''}`
      : version === undefined
        ? name
        : `${name}_${version}`;
    if (target === undefined || target === '') continue;
    for (let at = node.name.indexOf(`_${target}_`); at >= 0; at = node.name.indexOf(`_${target}_`, at + 1)) {
      const kind = node.name.slice(0, at);
      if (!source) {
        if (kind !== '') found.push(kind);
      } else if (kind.startsWith('source_') && kind.length > 'source_'.length)
        found.push(kind.slice('source_'.length));
    }
  }
  if (found.length === 0) return cutNamed(node.name, parents, testMacros);
  found.sort((a, b) => a.length - b.length);
  // The test's own name comes first: the first split that names a generic test of the manifest's macros (a
  // model `null` of `not_null_null_id`), else one of dbt's, else the first.
  for (const kind of found) {
    const named = macroNamed(kind, testMacros);
    if (named !== undefined) return named;
  }
  const kind = found.find((k) => DBT_GENERIC_TESTS.has(k)) ?? found[0];
  return kind === undefined ? undefined : { name: kind };
}

/**
 * The generic test of the macros `kind` names: one of that name (the root project's, or a package's called
 * without its package), else a package's called with it, `<package>_<test>` (`dbt.` names dbt's own test).
 */
function macroNamed(kind: string, testMacros: ReadonlySet<string>): NamedTest | undefined {
  const index = macroIndexOf(testMacros);
  return index.byName.get(kind) ?? index.byPackageAndName.get(kind);
}

interface MacroIndex {
  byName: Map<string, NamedTest>;
  byPackageAndName: Map<string, NamedTest>;
}

/** Each manifest's test macros indexed once, not scanned again for every split of every test. */
const macroIndexes = new WeakMap<ReadonlySet<string>, MacroIndex>();

function macroIndexOf(testMacros: ReadonlySet<string>): MacroIndex {
  let index = macroIndexes.get(testMacros);
  if (index !== undefined) return index;
  index = { byName: new Map(), byPackageAndName: new Map() };
  for (const macro of testMacros) {
    const dot = macro.indexOf('.');
    const pkg = macro.slice(0, dot);
    const name = macro.slice(dot + 1);
    if (!index.byName.has(name)) index.byName.set(name, { name });
    const namespaced = `${pkg}_${name}`;
    if (!index.byPackageAndName.has(namespaced))
      index.byPackageAndName.set(namespaced, pkg === 'dbt' ? { name } : { name, namespace: pkg });
  }
  macroIndexes.set(testMacros, index);
  return index;
}

/**
 * dbt Fusion's name of a generic test whose whole name has 64 characters or more: its `<test>_<target>` (a
 * source's `source_<test>_<source>_<table>`) cut to 30 characters, `_`, and the MD5 of the whole name. The cut
 * start of the name. Fusion's identifier leaves a package's test's package out; dbt-core's short name (a node's
 * alias) keeps it (`dbt_expectations_expect_column_…`, as the real manifests' aliases read): both are read.
 */
const CUT_NAME = /^(.{30})_[0-9a-f]{32}$/;

/**
 * The generic test a cut name (CUT_NAME) says: the one test of the manifest's macros, or of dbt's own, whose
 * `<test>_<target>` for one of the test's parents, cut alike, is the name's start. Undefined when none is, or
 * tests of two names are (the cut falls where `expect_column_values_to_not_be_null` and `…_not_be_in_set`
 * agree): gds cannot tell which.
 */
function cutNamed(
  name: string,
  parents: ReadonlySet<string>,
  testMacros: ReadonlySet<string>,
): NamedTest | undefined {
  const start = CUT_NAME.exec(name)?.[1];
  if (start === undefined) return undefined;
  const index = macroIndexOf(testMacros);
  const kinds = new Set([...index.byName.keys(), ...DBT_GENERIC_TESTS]);
  // `<package>_<test>` of a package's test (dbt's own tests have no package in their names)
  const namespaced = [...index.byPackageAndName].filter(([, test]) => test.namespace !== undefined);
  const named = new Set<string>();
  for (const parent of parents) {
    const [type, , parentName, version] = parent.split('.');
    const identifier =
      type === 'source'
        ? (kind: string, namespace = '') => `${namespace}source_${kind}_${parentName ?? ''}_${version ?? ''}`
        : (kind: string, namespace = '') =>
            `${namespace}${kind}_${parentName ?? ''}${version === undefined ? '' : `_${version}`}`;
    for (const kind of kinds) if (identifier(kind).slice(0, 30) === start) named.add(kind);
    for (const [key, test] of namespaced)
      if (identifier(test.name, `${test.namespace ?? ''}_`).slice(0, 30) === start) named.add(key);
  }
  const [only, ...others] = named;
  return only === undefined || others.length > 0
    ? undefined
    : (macroNamed(only, testMacros) ?? { name: only });
}
