// The dbt reader is what declareDbtProject reads SQL with, the tests' predicates included: a reader made of
// PostgreSQL's grammar alone is enough, with nothing else loaded first (this file imports no gate1 index,
// which would load the predicate checker's own parser for the whole process).
import { describe, expect, it } from 'vitest';
import * as yaml from 'yaml';
import { pgGrammar } from '../../../src/core/artifacts/pg-grammar.js';
import { declareDbtProject } from '../../../src/core/dbt/project.js';
import { columns, genericTest, manifest, model } from './helpers.js';

const orders = model('orders', { columns: columns({ order_id: 'integer', amount: 'numeric' }) });

describe('a dbt reader given in', () => {
  it("reads a predicate that needs PostgreSQL's parser with the reader's grammar", async () => {
    const grammar = await pgGrammar();
    const test = (expression: string, id: string) =>
      genericTest('expression_is_true', 'model.shop.orders', { expression }, { namespace: 'dbt_utils', id });
    const project = declareDbtProject(
      {
        manifest: manifest(
          orders,
          test('coalesce(amount, 0) >= 0', 'test.shop.kept.a1'),
          test('amount >= (SELECT 1)', 'test.shop.refused.a2'),
        ),
      },
      { select: ['orders'] },
      { grammar, yaml },
    );
    const [declaration] = project.declarations;
    const gate1 = yaml.parse(declaration?.gate1Yaml ?? '{}') as { customPredicates?: Array<{ sql: string }> };
    expect(gate1.customPredicates?.map((p) => p.sql)).toEqual(['coalesce(amount, 0) >= 0']);
    expect(declaration?.notMappedTests.map((t) => t.test)).toEqual(['test.shop.refused.a2']);
  });
});
