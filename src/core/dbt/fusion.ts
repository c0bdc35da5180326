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

/**
 * The generic test a test's name says, as dbt names one (synthesize_generic_test_names):
 * `<test>_<target>_<arguments>`, the target a parent model's name (`<name>_v<N>` for a version), or
 * `source_<test>_<source>_<table>_…` for a source's. A namespaced test's `<test>` keeps its package
 * (`dbt_utils_expression_is_true`). Undefined: the name follows none of its parents.
 */
export function testNamedBy(node: ManifestNode): string | undefined {
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
  // The test's own name comes first: the first split, unless a later one names one of dbt's tests (a model
  // `null` of `not_null_null_id`).
  return found.find((kind) => DBT_GENERIC_TESTS.has(kind)) ?? found.sort((a, b) => a.length - b.length)[0];
}
