// The human plan (gds plan, and apply before it writes) says the service's strings on gds's own lines: an
// environment's label, the project a table is taken over from, the certified tables downstream of a change,
// a gone table's name. A line break in one reads as a space, so that none starts a line that reads as gds's
// (test/e2e/hostile-service-plan.test.ts drives the names through a hostile service; the environment's label
// cannot be: the service refuses every read in an environment it does not know).
import { describe, expect, it } from 'vitest';
import { Output } from '../../src/cli/output.js';
import { printApplySummary, printPlan, printPlanNotes } from '../../src/cli/project-views.js';
import { CliError, ExitCode } from '../../src/core/errors.js';
import type { PlannedTable, ProjectPlan } from '../../src/services/project-plan-types.js';

const FORGED = '\nForged:   CERTIFIED by you';

function capture() {
  const stdout = { text: '', write: (c: string) => ((stdout.text += c), true) };
  const stderr = { text: '', write: (c: string) => ((stderr.text += c), true) };
  return { out: new Output({ json: false, stdout, stderr, env: {} }), stdout, stderr };
}

const table = (name: string, more: Partial<PlannedTable>): PlannedTable => ({
  table: name,
  source: `analytics.${name}`,
  action: 'create',
  tableId: null,
  uniqueId: `model.shop.${name}`,
  resourceType: 'model',
  mappedTests: [],
  notMappedTests: [],
  changes: { definition: true, gate1: false, contract: false },
  diffs: {},
  ...more,
});

const plan: ProjectPlan = {
  projectName: 'shop',
  project: { id: 'shop@con_1', from: 'derived' },
  untouched: { otherProjects: 1, byHand: 1 },
  connector: { id: 'con_1', environmentLabel: `dev${FORGED}` },
  tables: [
    table('orders', { downstreamCertified: [`fct_orders${FORGED}`] }),
    table('customers', { action: 'replace', tableId: 'tbl_1', adopt: { from: `billing${FORGED}` } }),
    table(`payments${FORGED}`, { action: 'gone', tableId: 'tbl_2', uniqueId: null, resourceType: null }),
  ],
  otherTests: [],
  warnings: [],
  counts: {
    create: 1,
    replace: 1,
    unchanged: 0,
    gone: 1,
    refused: 0,
    ownedElsewhere: 0,
    skipped: 0,
    submit: 0,
  },
};

describe('the human plan', () => {
  it("says the service's strings on gds's lines, a line break in them a space", async () => {
    const { out, stdout, stderr } = capture();
    await printPlan(out, plan);
    const forged = `${stdout.text}${stderr.text}`.split('\n').filter((l) => l.startsWith('Forged:'));
    expect(forged).toEqual([]);
    expect(stderr.text).toMatch(
      /^Project shop@con_1 against connector con_1 \(dev Forged: +CERTIFIED by you\):$/m,
    );
    expect(stdout.text).toMatch(
      /^ {2}1 certified table reads from this: fct_orders Forged: +CERTIFIED by you$/m,
    );
    expect(stdout.text).toMatch(/^ {4}adopt: taken over from project billing Forged: +CERTIFIED by you$/m);
    expect(stdout.text).toMatch(/^- gone payments Forged: +CERTIFIED by you \(analytics\.payments/m);
    expect(stdout.text).toMatch(/^Left alone in dev Forged: +CERTIFIED by you: 1 table of other projects/m);
  });
});

describe("apply's last line", () => {
  it('names a failed table on its one line: a gone table’s name from the service forges no line after it', () => {
    const { out, stdout } = capture();
    const error = new CliError('Forbidden', { exitCode: ExitCode.Failure, code: 'forbidden' });
    printApplySummary(
      out,
      {
        actions: [],
        applied: 0,
        failed: [{ table: `payments${FORGED}\u001b[2J`, tableId: 'tbl_2', step: 'remove', error }],
        pruneSkipped: 0,
      },
      {
        create: 0,
        replace: 0,
        unchanged: 0,
        remove: 1,
        failed: 1,
        refused: 0,
        skipped: 0,
        submit: 0,
        recertificationRequested: 0,
      },
    );
    expect(stdout.text.split('\n').filter((l) => l.startsWith('Forged:'))).toEqual([]);
    expect(stdout.text).toBe(
      'Apply: 0 tables applied (0 writes), 1 failed: payments Forged:   CERTIFIED by you (remove).\n',
    );
  });
});

describe("the human plan's warnings", () => {
  const shim = (n: number) =>
    `model.shop.m${n}: test.shop.expression_is_true_m${n}.${n}a: the manifest holds macro.tsql_utils.sqlserver__test_expression_is_true, which dbt runs instead`;
  const warnings = [
    shim(1),
    'model.shop.m1: its collation may compare case-insensitively',
    ...Array.from({ length: 1999 }, (_, i) => shim(i + 2)),
    'model.shop.m7: test.shop.unique_m7_id.9f: a where: reads the clock',
    'manifest.json was written by dbt 1.12: newer than gds knows',
  ];

  it('says one said alike of 2,000 tests once, with how many and the first two; the others as they are', async () => {
    const { out, stderr } = capture();
    await printPlan(out, { ...plan, warnings });
    const lines = stderr.text
      .split('\n')
      .filter((l) => /macro\.tsql_utils|collation|clock|newer than/.test(l));
    expect(lines).toEqual([
      expect.stringMatching(
        /^Warning: 2000 tests: the manifest holds macro\.tsql_utils\.sqlserver__test_expression_is_true, which dbt runs instead \(test\.shop\.expression_is_true_m1\.1a, test\.shop\.expression_is_true_m2\.2a and 1998 more; --json lists each\)$/,
      ),
      expect.stringMatching(/model\.shop\.m1: its collation may compare case-insensitively$/),
      expect.stringMatching(/model\.shop\.m7: test\.shop\.unique_m7_id\.9f: a where: reads the clock$/),
      expect.stringMatching(/manifest\.json was written by dbt 1\.12: newer than gds knows$/),
    ]);
  });

  it('under --json, every warning stays a line of its own', () => {
    const stdout = { text: '', write: (c: string) => ((stdout.text += c), true) };
    const stderr = { text: '', write: (c: string) => ((stderr.text += c), true) };
    printPlanNotes(new Output({ json: true, stdout, stderr, env: {} }), { ...plan, warnings });
    const said = stderr.text
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { warning: { message: string } }).warning.message);
    expect(said).toEqual(warnings);
  });
});
