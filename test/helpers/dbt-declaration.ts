// A dbt model as the reader declares it (src/core/dbt/types.ts): columns id (the grain key) and label (or
// others), in analytics_dev, with a gate1.yml and a contract intent; for tests of plan and apply that need no manifest.
import type { DbtDeclaration, DbtProject } from '../../src/core/dbt/types.js';

export function dbtDeclaration(
  name: string,
  packageName: string,
  columns: DbtDeclaration['columns'] = [
    { name: 'id', type: 'integer', required: true },
    { name: 'label', type: 'text' },
  ],
): DbtDeclaration {
  return {
    uniqueId: `model.${packageName}.${name}`,
    resourceType: 'model',
    name,
    source: { schema: 'analytics_dev', table: name },
    columns,
    columnsFrom: 'catalog',
    artifact: {
      fileName: `${name}.json`,
      mimeType: 'json',
      content: JSON.stringify({ table: name, source: `analytics_dev.${name}`, columns }),
    },
    gate1Yaml: 'fieldOverrides:\n  - field: id\n    nullRate: { warn: 0, fail: 0 }\n',
    contract: { grainType: 'ONE_PER_ENTITY', grainKeyColumns: ['id'] },
    mappedTests: [],
    notMappedTests: [],
    packageName,
    fqn: [packageName, name],
    tags: [],
  };
}

/** A project of such models. */
export function dbtProjectOf(packageName: string, names: string[]): DbtProject {
  return {
    projectName: packageName,
    declarations: names.map((name) => dbtDeclaration(name, packageName)),
    refusals: [],
    otherTests: [],
    warnings: [],
  };
}
