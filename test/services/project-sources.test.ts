// What `gds plan` says of a table it refuses because its dbt node is built into a schema the plan's connector
// does not read (its schema config) while the project's other tables are where the connector reads: the
// reason names the node as what it is (a model, a snapshot, a seed), and the fix.
import { describe, expect, it } from 'vitest';
import type { PlannedTable } from '../../src/services/project-plan-types.js';
import type { WarehouseSources } from '../../src/services/project-sources.js';
import { refuseMissingSources } from '../../src/services/project-sources.js';

/** One connector, `main`, reading schema analytics, where dbt built every table before. */
const sources: WarehouseSources = (() => {
  const reads = {
    connector: { id: 'con_main', name: 'main' },
    schema: 'analytics',
    sources: new Set([
      'analytics.orders',
      'analytics.orders_snapshot',
      'analytics.countries',
      'analytics.kept',
    ]),
  };
  return { chosen: reads, environmentLabel: 'dev', all: [reads] };
})();

function planned(resourceType: string, table: string, schema: string): PlannedTable {
  return {
    table,
    source: `${schema}.${table}`,
    action: 'create',
    tableId: null,
    uniqueId: `${resourceType}.shop.${table}`,
    resourceType,
    mappedTests: [],
    notMappedTests: [],
    changes: { definition: true, gate1: true, contract: false },
    diffs: {},
  };
}

describe('refuseMissingSources', () => {
  it.each([
    ['model', 'orders'],
    ['snapshot', 'orders_snapshot'],
    ['seed', 'countries'],
  ])('names a %s moved by its schema config as what it is (%s)', (resourceType, table) => {
    const tables = [planned('model', 'kept', 'analytics'), planned(resourceType, table, 'analytics_other')];
    refuseMissingSources(tables, sources);
    expect(tables[0]?.action).toBe('create');
    expect(tables[1]?.action).toBe('refused');
    const reason = tables[1]?.reason ?? '';
    // A snapshot's schema is its target_schema (dbt before 1.9) or its schema config.
    const config = resourceType === 'snapshot' ? 'its target_schema or schema config' : 'its schema config';
    expect(reason).toContain(`the ${resourceType} is built into schema analytics_other (${config})`);
    for (const other of ['model', 'snapshot', 'seed'].filter((t) => t !== resourceType))
      expect(reason).not.toContain(`the ${other} is built`);
    expect(reason).toContain(`or leave it out with --exclude ${table}`);
  });
});
