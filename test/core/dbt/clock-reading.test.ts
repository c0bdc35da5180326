// A dbt test whose where: reads the clock other than by now() or current_date: age() of one value (the time
// since then, counted from today) and the special inputs 'today', 'yesterday', 'tomorrow' and 'now' of a
// date or timestamp. Gate 1 reads that clock when the gate runs, as it does current_date: the plan warns of
// each, naming the test, as it does of current_date (warehouse-semantics.test.ts). age() of two values, and
// those words as a column's name, read no clock.
import { beforeAll, describe, expect, it } from 'vitest';
import { declareDbtProject, prepareDbtReader } from '../../../src/core/dbt/project.js';
import type { DbtReader } from '../../../src/core/dbt/project.js';
import { columns, genericTest, manifest, model } from './helpers.js';

let dbtReader: DbtReader;
beforeAll(async () => {
  dbtReader = await prepareDbtReader();
});

const people = model('people', {
  columns: columns({ id: 'integer', name: 'text', created_at: 'timestamp', born: 'date' }),
});

const recent = (where: string, id: string) =>
  genericTest(
    'not_null',
    'model.shop.people',
    {},
    { column: 'id', config: { where }, id: `test.shop.not_null_recent_${id}.abc` },
  );

/** The plan's clock warnings of the tests, on PostgreSQL. */
function clockWarnings(tests: Array<Record<string, unknown>>): string[] {
  const m = manifest(people, ...tests);
  (m['metadata'] as Record<string, unknown>)['adapter_type'] = 'postgres';
  const project = declareDbtProject({ manifest: m }, {}, dbtReader);
  expect(project.declarations[0]?.mappedTests).toHaveLength(tests.length);
  return project.warnings.filter((w) => w.includes('reads the clock'));
}

describe('a where: reading the clock through age() or a date of today', () => {
  it('age() of one value counts from today: the plan warns, naming the test', () => {
    const [warning, ...others] = clockWarnings([recent("age(born) < interval '18 years'", 'age')]);
    expect(others).toEqual([]);
    expect(warning).toMatch(/not_null_recent_age\.abc: its SQL reads the clock \(age\(…\) of one value\)/);
    // The gates read the clock in UTC (docs/gate1.md), not in the zone of the database's session.
    expect(warning).toContain('when the gate runs, in UTC');
    expect(warning).toContain('--exclude not_null_recent_age');
  });

  it("'today', 'yesterday', 'tomorrow' and 'now' as a date or timestamp: the plan warns of each", () => {
    const warnings = clockWarnings([
      recent("created_at >= 'today'::date - 7", 'today'),
      recent("born > date 'yesterday'", 'yesterday'),
      recent("created_at < cast('Tomorrow' as timestamp)", 'tomorrow'),
      recent("created_at <= 'now'", 'now'),
    ]);
    // The plan's warnings are in the order of the tests' ids.
    expect(warnings).toEqual([
      expect.stringMatching(/not_null_recent_now\.abc: its SQL reads the clock \('now'\)/),
      expect.stringMatching(/not_null_recent_today\.abc: its SQL reads the clock \('today'\)/),
      expect.stringMatching(/not_null_recent_tomorrow\.abc: its SQL reads the clock \('Tomorrow'\)/),
      expect.stringMatching(/not_null_recent_yesterday\.abc: its SQL reads the clock \('yesterday'\)/),
    ]);
  });

  it('age() of two values, a name holding those words, or a longer string: no warning', () => {
    expect(
      clockWarnings([
        recent("age(created_at, born) < interval '1 year'", 'two'),
        recent("name <> 'today is the day'", 'words'),
      ]),
    ).toEqual([]);
  });
});
