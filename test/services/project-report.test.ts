// The CERTIFIED tables downstream of each change (`downstreamCertified`) on a deep project: a 3,000-model chain.
import { describe, expect, it } from 'vitest';
import type { TableListRow } from '../../src/client/areas/tables.js';
import type { DbtLineageNode } from '../../src/core/dbt/types.js';
import type { PlannedTable } from '../../src/services/project-plan-types.js';
import { reportPlanned } from '../../src/services/project-report.js';

const N = 3000;
const SELECTED = 2990;

function planned(index: number): PlannedTable {
  return {
    table: `m${index}`,
    source: `analytics.m${index}`,
    // Every tenth table the plan leaves unchanged: it names nothing downstream.
    action: index % 10 === 5 ? 'unchanged' : 'create',
    tableId: null,
    uniqueId: `model.deep.m${index}`,
    resourceType: 'model',
    mappedTests: [],
    notMappedTests: [],
    changes: { definition: true, gate1: true, contract: false },
    diffs: {},
  };
}

describe('reportPlanned on a 3,000-model chain', () => {
  it('names, for each change, every CERTIFIED table below it, nearest first, itself excluded', () => {
    // m0 <- m1 <- … <- m2999; the plan selects m0…m2989. The tables of m99, m199, … are CERTIFIED; so is
    // m2995's table promoted here (m2995_production), which an unselected node is known by.
    const lineage: DbtLineageNode[] = Array.from({ length: N }, (_, i) => ({
      uniqueId: `model.deep.m${i}`,
      name: `m${i}`,
      parents: i === 0 ? ['source.deep.raw.orders'] : [`model.deep.m${i - 1}`],
    }));
    const certifiedIndexes = [...Array.from({ length: N / 100 }, (_, k) => k * 100 + 99), 2995].sort(
      (a, b) => a - b,
    );
    const certifiedName = (i: number) => (i === 2995 ? 'm2995_production' : `m${i}`);
    const rows = certifiedIndexes.map((i) => ({ id: `t${i}`, name: certifiedName(i), state: 'CERTIFIED' }));
    // A table not CERTIFIED is never named.
    rows.push({ id: 't150', name: 'm150', state: 'QUARANTINED' });
    const tables = Array.from({ length: SELECTED }, (_, i) => planned(i));

    reportPlanned(tables, {
      warehouse: undefined,
      rows: rows as unknown as TableListRow[],
      lineage,
      promotedNames: (name) => [`${name}_production`],
    });

    expect(tables).toHaveLength(SELECTED);
    for (const [i, table] of tables.entries()) {
      const expected =
        table.action === 'create' ? certifiedIndexes.filter((j) => j > i).map(certifiedName) : [];
      expect(table.downstreamCertified, table.table).toEqual(expected);
    }
    expect(tables[0]?.downstreamCertified).toHaveLength(31);
    expect(tables[0]?.downstreamCertified?.slice(0, 2)).toEqual(['m99', 'm199']);
    expect(tables[2989]?.downstreamCertified).toEqual(['m2995_production', 'm2999']);
  });
});
