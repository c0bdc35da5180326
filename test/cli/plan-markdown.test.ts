// `gds plan --format markdown` (src/cli/plan-markdown.ts): a pull-request comment with the counts as a table,
// one collapsible block per table that is not unchanged (none for unchanged ones), names and diffs that
// cannot break out of their HTML or code fence, and a comment that stays under GitHub's 65,536 characters.
import { describe, expect, it } from 'vitest';
import { planMarkdown } from '../../src/cli/plan-markdown.js';
import type { PlannedTable, ProjectPlan } from '../../src/services/project-plan-types.js';
import { planSummary } from '../../src/services/project-report.js';

function table(
  name: string,
  action: PlannedTable['action'],
  extra: Partial<PlannedTable> = {},
): PlannedTable {
  return {
    table: name,
    source: `analytics.${name}`,
    action,
    tableId: action === 'create' ? null : `tbl_${name}`,
    uniqueId: `model.shop.${name}`,
    resourceType: 'model',
    mappedTests: [],
    notMappedTests: [],
    changes: { definition: action !== 'unchanged', gate1: false, contract: false },
    diffs: {},
    downstreamCertified: [],
    recertificationRequested: false,
    ...extra,
  };
}

function plan(tables: PlannedTable[]): ProjectPlan {
  const count = (action: PlannedTable['action']) => tables.filter((t) => t.action === action).length;
  return {
    projectName: 'shop',
    project: { id: 'shop@con_1', from: 'derived' },
    untouched: { otherProjects: 0, byHand: 0 },
    connector: { id: 'con_1', environmentLabel: 'dev' },
    tables,
    otherTests: [],
    warnings: [],
    counts: {
      create: count('create'),
      replace: count('replace'),
      unchanged: count('unchanged'),
      gone: count('gone'),
      refused: count('refused'),
      ownedElsewhere: count('owned-elsewhere'),
      skipped: count('skipped'),
      submit: count('submit'),
    },
  };
}

describe('plan --format markdown', () => {
  it('a summary table, then one <details> block per changed table with its diff and downstream certified tables', () => {
    const p = plan([
      table('orders', 'replace', {
        diffs: { definition: '--- a\n+++ b\n-old\n+new ``` fence\n' },
        downstreamCertified: ['fct_orders', 'customer_ltv'],
        recertificationRequested: true,
      }),
      table('customers', 'unchanged'),
      table('old_model', 'gone'),
    ]);
    const text = planMarkdown(p, planSummary(p));
    expect(text).toContain('| `~ replace` | 1 |\n| `= unchanged` | 1 |\n| `- remove` | 1 |');
    expect(text).toContain(
      '**Plan: 0 to create, 1 to change, 1 unchanged, 1 to remove.** Applying files 1 recertification request.',
    );
    expect(text.split('<details>').length - 1).toBe(2);
    expect(text).not.toContain('<strong>customers</strong>');
    expect(text).toContain('**2 certified tables read from this: fct\\_orders, customer\\_ltv**');
    // The diff's own ``` cannot close the fence.
    expect(text).toContain('````diff\n--- a\n+++ b\n-old\n+new ``` fence\n````');
  });

  it('escapes HTML in names and reasons, and names the tables past the size budget instead of showing them', () => {
    const hostile = table('<img src=x onerror=alert(1)>', 'refused', { reason: 'no </details> here' });
    const big = Array.from({ length: 200 }, (_, i) =>
      table(`t${i}`, 'create', { diffs: { definition: `+${'x'.repeat(1000)}\n` } }),
    );
    const p = plan([hostile, ...big]);
    const text = planMarkdown(p, planSummary(p));
    expect(text).not.toContain('<img');
    expect(text).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(text).toContain('no &lt;/details&gt; here');
    expect(text.length).toBeLessThan(65_536);
    expect(text).toMatch(/\d+ more tables change \(the whole plan is in the job's log\): t\d+, /);
  });
});

describe("plan --format markdown's warnings", () => {
  const shim = (n: number) =>
    `model.shop.m${n}: test.shop.expression_is_true_m${n}.${n}a: the manifest holds macro.tsql_utils.sqlserver__test_expression_is_true, which dbt runs instead`;

  it('a warning said alike of 2,000 tests is said once, and the comment stays under 65,536 characters', () => {
    const p = {
      ...plan([table('orders', 'create')]),
      warnings: [
        ...Array.from({ length: 2000 }, (_, i) => shim(i + 1)),
        'model.shop.m7: a where: reads the clock',
      ],
    };
    const text = planMarkdown(p, planSummary(p));
    expect(text.length).toBeLessThan(65_536);
    expect(text).toContain(
      '> 2000 tests: the manifest holds macro.tsql\\_utils.sqlserver\\_\\_test\\_expression\\_is\\_true, which dbt runs instead',
    );
    expect(text).toContain('> model.shop.m7: a where: reads the clock');
  });

  it('the grouped line tells the reader of a PR comment, who ran no --json, to run gds plan --json', () => {
    const p = { ...plan([table('orders', 'create')]), warnings: [shim(1), shim(2), shim(3)] };
    const text = planMarkdown(p, planSummary(p));
    expect(text).toContain('and 1 more; gds plan --json lists each)');
    expect(text).not.toContain('; --json lists each');
  });

  it('a warning that starts with a file name (catalog.json: …) is not grouped as said of nodes or tests', () => {
    const ofModel = (n: number) => `catalog.json: model.shop.m${n}: lists no column of the compiled SQL`;
    const alike = 'catalog.json: written by another dbt than manifest.json';
    const p = {
      ...plan([table('orders', 'create')]),
      warnings: [ofModel(1), ofModel(2), ofModel(3), alike, alike, alike],
    };
    const text = planMarkdown(p, planSummary(p));
    expect(text).not.toMatch(/> 3 (nodes|tests):/);
    expect(text.split('\n').filter((line) => line === `> ${alike}`)).toHaveLength(3);
    for (const n of [1, 2, 3]) expect(text).toContain(`> ${ofModel(n)}`);
  });

  it('thousands of warnings that differ stay under 65,536 characters, the rest counted', () => {
    const p = {
      ...plan([table('orders', 'create')]),
      warnings: Array.from(
        { length: 3000 },
        (_, i) => `model.shop.m${i}: column c${i} has no type ${'y'.repeat(40)}`,
      ),
    };
    const text = planMarkdown(p, planSummary(p));
    expect(text.length).toBeLessThan(65_536);
    expect(text).toMatch(/\n> \d+ more warnings \(the whole plan is in the job's log\)\n$/);
  });

  it('the tables past the budget are named only as far as the budget goes', () => {
    const big = Array.from({ length: 6000 }, (_, i) =>
      table(`a_rather_long_model_name_${i}`, 'create', { diffs: { definition: `+${'x'.repeat(100)}\n` } }),
    );
    const p = plan(big);
    const text = planMarkdown(p, planSummary(p));
    expect(text.length).toBeLessThan(65_536);
  });
});
