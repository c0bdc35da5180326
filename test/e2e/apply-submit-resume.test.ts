// `gds apply --submit` run again after a run that was killed half-way (SIGKILL between registering tables and
// submitting them), in the test process against the reference server. The killed run is arranged, not timed:
// some tables registered and submitted (PENDING_REVIEW), some registered and never submitted (QUARANTINED, as
// the kill leaves them), the rest not registered. A re-run converges to what an uninterrupted run leaves:
// every table PENDING_REVIEW, each submitted once; `plan --submit` shows the QUARANTINED ones as `^ submit`
// first, and a third run finds nothing to do. Without --submit, plan and apply leave them alone. A table a
// steward rejected (QUARANTINED again, as it was submitted) is not submitted again; one changed since is. One
// waiting for review that a run rebuilt after its submission (recertify: its proof is stale, certify blocked)
// is: a CI job that recertifies, then applies with --submit, leaves every submission fresh.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GeneratedProject } from './generated-project.js';
import { generatedProject, jsonLines as lines, linesWhere } from './generated-project.js';

let shop: GeneratedProject;

/** Each of the project's tables: its lifecycle state and how many times it was submitted. */
async function states(): Promise<Record<string, { state: string; submitted: number }>> {
  const rows = await shop.server.sql<{ name: string; state: string; submitted: number }>(
    `SELECT t.name, t.state,
            (SELECT count(*)::int FROM gds.gate_proofs p WHERE p.table_id = t.id AND p.kind = 'submit') AS submitted
       FROM gds.tables t
      WHERE t.workspace_id = $1 AND t.active AND t.project IS NOT NULL`,
    [shop.server.ready.workspaceId],
  );
  return Object.fromEntries(rows.map((r) => [r.name, { state: r.state, submitted: r.submitted }]));
}

/** A steward's rejection of the project's table `name` (QUARANTINED again, as it was submitted). */
async function reject(name: string, reason: string): Promise<void> {
  const { server } = shop;
  const [table] = await server.sql<{ id: string }>(
    `SELECT id FROM gds.tables WHERE workspace_id = $1 AND active AND name = $2`,
    [server.ready.workspaceId, name],
  );
  const answer = await server.request('POST', `/api/tables/${table?.id ?? ''}/reject`, {
    token: server.user('STEWARD').cliToken,
    body: { reason },
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
}

beforeAll(async () => {
  shop = await generatedProject('submit-resume');
});

afterAll(async () => {
  await shop?.close();
});

describe('gds apply --submit after a run killed half-way', { timeout: 300_000 }, () => {
  it('submits the tables the killed run registered but never submitted, once, and then has nothing to do', async () => {
    const { gds, onDev } = shop;
    // What the killed run left: the seeds registered and submitted, two staging models registered only.
    const submitted = await gds([
      'apply',
      ...onDev(),
      '--select',
      'raw_source_0 raw_source_1 raw_source_2',
      '--submit',
      '--yes',
    ]);
    expect(submitted.code, submitted.stderr).toBe(0);
    const registered = await gds(['apply', ...onDev(), '--select', 'stg_entity_0 stg_entity_1', '--yes']);
    expect(registered.code, registered.stderr).toBe(0);
    expect(await states()).toEqual({
      raw_source_0: { state: 'PENDING_REVIEW', submitted: 1 },
      raw_source_1: { state: 'PENDING_REVIEW', submitted: 1 },
      raw_source_2: { state: 'PENDING_REVIEW', submitted: 1 },
      stg_entity_0: { state: 'QUARANTINED', submitted: 0 },
      stg_entity_1: { state: 'QUARANTINED', submitted: 0 },
    });

    // Without --submit nothing differs for them: unchanged.
    const plain = await gds([
      'plan',
      ...onDev(),
      '--select',
      'stg_entity_0 stg_entity_1',
      '--detailed-exitcode',
    ]);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).toContain('Plan: 0 to create, 0 to change, 2 unchanged, 0 to remove.');

    // plan --submit shows what apply --submit will do: submit the two, create the other four.
    const plan = await gds(['plan', ...onDev(), '--submit']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toMatch(/^\^ submit stg_entity_0 \(analytics_dev\.stg_entity_0, tbl_\w+\)$/m);
    expect(plan.stdout).toMatch(/^\^ submit stg_entity_1 /m);
    expect(plan.stdout).not.toMatch(/submit raw_source/);
    expect(plan.stdout).toContain('Plan: 4 to create, 0 to change, 3 unchanged, 0 to remove. 2 to submit.');
    const planJson = await gds(['plan', ...onDev(), '--submit', '--json', '--detailed-exitcode']);
    expect(planJson.code, planJson.stderr).toBe(2);
    const planned = lines(planJson.stdout);
    expect(linesWhere(planned, ['action', 'submit'], 'table')).toEqual([['stg_entity_0'], ['stg_entity_1']]);
    expect(planned.at(-1)).toMatchObject({ summary: { create: 4, unchanged: 3, submit: 2 } });

    const resumed = await gds(['apply', ...onDev(), '--submit', '--yes', '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const actions = lines(resumed.stdout);
    expect(linesWhere(actions, ['step', 'submit'], 'table', 'outcome')).toEqual([
      ['fct_entity_4', 'done'],
      ['fct_entity_5', 'done'],
      ['int_entity_2', 'done'],
      ['int_entity_3', 'done'],
      ['stg_entity_0', 'done'],
      ['stg_entity_1', 'done'],
    ]);
    expect(actions.at(-1)).toMatchObject({ summary: { create: 4, unchanged: 3, submit: 2, failed: 0 } });

    // What an uninterrupted run leaves: every table PENDING_REVIEW, each submitted once.
    const after = await states();
    expect(Object.keys(after)).toHaveLength(9);
    for (const [name, held] of Object.entries(after))
      expect([name, held]).toEqual([name, { state: 'PENDING_REVIEW', submitted: 1 }]);

    // A third run has nothing to do, and plan --submit agrees.
    const third = await gds(['apply', ...onDev(), '--submit', '--yes']);
    expect(third.code, third.stderr).toBe(0);
    expect(third.stderr).toContain('Nothing to apply.');
    const settled = await gds(['plan', ...onDev(), '--submit', '--detailed-exitcode']);
    expect(settled.code, settled.stderr).toBe(0);
    expect(settled.stdout).toContain('Plan: 0 to create, 0 to change, 9 unchanged, 0 to remove.');
    expect(await states()).toEqual(after);
  });

  // Goes on from the state the test above leaves: every table PENDING_REVIEW, submitted once.
  it('never submits again a table a steward rejected as it is; a saved plan --submit submits one changed since', async () => {
    const { gds, onDev } = shop;
    await reject('raw_source_0', 'the amounts are wrong');
    expect((await states())['raw_source_0']).toEqual({ state: 'QUARANTINED', submitted: 1 });

    const plan = await gds(['plan', ...onDev(), '--submit', '--json', '--detailed-exitcode']);
    expect(plan.code, plan.stderr).toBe(0);
    const line = lines(plan.stdout).find((l) => l['table'] === 'raw_source_0');
    expect(line).toMatchObject({ action: 'unchanged' });
    expect(line?.['reason']).toContain('gds gate submit raw_source_0 submits it again');
    const noop = await gds(['apply', ...onDev(), '--submit', '--yes']);
    expect(noop.code, noop.stderr).toBe(0);
    expect(noop.stderr).toContain('Nothing to apply.');
    expect((await states())['raw_source_0']).toEqual({ state: 'QUARANTINED', submitted: 1 });

    // fct_entity_4 changes and is applied without --submit: QUARANTINED, its new definition never submitted.
    await shop.editManifest((manifest) => {
      const fct = manifest.nodes['model.shop.fct_entity_4'];
      if (fct === undefined) throw new Error('no fct_entity_4 in the generated manifest');
      fct.description = 'Entities, one row each, after the change';
    });
    const changed = await gds(['apply', ...onDev(), '--select', 'fct_entity_4', '--yes']);
    expect(changed.code, changed.stderr).toBe(0);
    expect((await states())['fct_entity_4']).toEqual({ state: 'QUARANTINED', submitted: 1 });

    const file = join(shop.dir, 'plan.json');
    const saved = await gds(['plan', ...onDev(), '--submit', '--out', file]);
    expect(saved.code, saved.stderr).toBe(0);
    expect(saved.stdout).toMatch(/^\^ submit fct_entity_4 /m);
    expect(saved.stdout).toContain('Plan: 0 to create, 0 to change, 8 unchanged, 0 to remove. 1 to submit.');
    const applied = await gds(['apply', file, '--yes', '--json']);
    expect(applied.code, applied.stderr).toBe(0);
    expect(lines(applied.stdout).filter((a) => 'step' in a)).toEqual([
      expect.objectContaining({ table: 'fct_entity_4', step: 'submit', outcome: 'done' }),
    ]);
    expect((await states())['fct_entity_4']).toEqual({ state: 'PENDING_REVIEW', submitted: 2 });
    expect((await states())['raw_source_0']).toEqual({ state: 'QUARANTINED', submitted: 1 });
  });

  // Goes on from the state the test above leaves.
  it('submits again a table waiting for review that a run rebuilt since, which recertify names', async () => {
    const { gds, onDev, server } = shop;
    const rebuilt = await gds(['recertify', '--tables', 'stg_entity_0,fct_entity_4', '--env', 'dev']);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(rebuilt.stderr).toContain(
      '2 tables waiting for review were rebuilt since they were submitted (stg_entity_0, fct_entity_4): certify is blocked until they are submitted again.',
    );
    expect(rebuilt.stderr).toContain('run gds recertify before apply --submit');
    const again = await gds(['recertify', '--tables', 'stg_entity_1,raw_source_0', '--env', 'dev', '--json']);
    expect(again.code, again.stderr).toBe(0);
    const [answer] = lines(again.stdout);
    expect(answer?.['outcomes']).toEqual([
      { table: 'stg_entity_1', outcome: 'not_certified', driftDetected: false, staleSubmission: true },
      // QUARANTINED (rejected): not waiting for review, nothing to say of a submission.
      { table: 'raw_source_0', outcome: 'not_certified', driftDetected: false },
    ]);

    // What the service says of each table waiting for review; nothing of a table in another state.
    const held = await server.request('GET', '/api/held-tables?environment=dev', {
      token: server.user('ADMIN').accessToken,
    });
    const stale = Object.fromEntries(
      (held.body as { tables: Array<{ name: string; staleSubmission?: boolean }> }).tables.map((t) => [
        t.name,
        t.staleSubmission,
      ]),
    );
    expect(stale).toMatchObject({
      stg_entity_0: true,
      stg_entity_1: true,
      fct_entity_4: true,
      int_entity_2: false,
      raw_source_0: undefined,
    });

    const plain = await gds(['plan', ...onDev(), '--detailed-exitcode']);
    expect(plain.code, plain.stderr).toBe(0);
    const human = await gds(['plan', ...onDev(), '--submit']);
    expect(human.stdout).toMatch(/^\^ submit stg_entity_1 \(analytics_dev\.stg_entity_1, tbl_\w+\)$/m);
    expect(human.stdout).toContain('PENDING_REVIEW with a stale proof');
    expect(human.stdout).toContain('3 to submit.');

    // A steward rejects stg_entity_1 after a plan saved with --submit: applying that plan leaves it rejected.
    const file = join(shop.dir, 'stale-plan.json');
    const saved = await gds(['plan', ...onDev(), '--submit', '--select', 'stg_entity_1', '--out', file]);
    expect(saved.code, saved.stderr).toBe(0);
    await reject('stg_entity_1', 'not yet');
    const fromSaved = await gds(['apply', file, '--yes', '--json']);
    expect(fromSaved.code, fromSaved.stderr).toBe(0);
    expect(lines(fromSaved.stdout).filter((a) => 'step' in a)).toEqual([
      expect.objectContaining({ table: 'stg_entity_1', step: 'submit', outcome: 'unchanged' }),
    ]);
    expect((await states())['stg_entity_1']).toEqual({ state: 'QUARANTINED', submitted: 1 });
    const plan = await gds(['plan', ...onDev(), '--submit', '--json', '--detailed-exitcode']);
    expect(plan.code, plan.stderr).toBe(2);
    const planned = lines(plan.stdout);
    expect(linesWhere(planned, ['action', 'submit'], 'table')).toEqual([['fct_entity_4'], ['stg_entity_0']]);
    expect(planned.find((l) => l['table'] === 'stg_entity_0')).toMatchObject({
      action: 'submit',
      staleSubmission: true,
      reason: expect.stringContaining('PENDING_REVIEW with a stale proof') as unknown,
    });
    expect(planned.find((l) => l['table'] === 'int_entity_2')).toMatchObject({ action: 'unchanged' });
    expect(planned.find((l) => l['table'] === 'int_entity_2')).not.toHaveProperty('staleSubmission');
    const applied = await gds(['apply', ...onDev(), '--submit', '--yes']);
    expect(applied.code, applied.stderr).toBe(0);
    const after = await states();
    expect(after['stg_entity_0']).toEqual({ state: 'PENDING_REVIEW', submitted: 2 });
    expect(after['stg_entity_1']).toEqual({ state: 'QUARANTINED', submitted: 1 });
    expect(after['fct_entity_4']).toEqual({ state: 'PENDING_REVIEW', submitted: 3 });
    expect(after['int_entity_2']).toEqual({ state: 'PENDING_REVIEW', submitted: 1 });

    // The steward's queue holds each once, with a fresh proof.
    const queue = await server.request('GET', '/api/notifications', {
      token: server.user('STEWARD').accessToken,
    });
    const entries = (queue.body as { notifications: Array<{ tableName: string; proof: { fresh: boolean } }> })
      .notifications;
    expect(entries.filter((e) => e.tableName === 'stg_entity_0')).toHaveLength(1);
    expect(entries.every((e) => e.proof.fresh)).toBe(true);
    const settled = await gds(['plan', ...onDev(), '--submit', '--detailed-exitcode']);
    expect(settled.code, settled.stderr).toBe(0);
  });
  // Goes on from the state the test above leaves: stg_entity_0 PENDING_REVIEW on a fresh proof.
  it('leaves a table a saved plan saw as a stale submission that a person submitted since: one scan, one notification', async () => {
    const { gds, onDev, server } = shop;
    const rebuilt = await gds(['recertify', '--tables', 'stg_entity_0', '--env', 'dev']);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    const file = join(shop.dir, 'raced-plan.json');
    const saved = await gds(['plan', ...onDev(), '--submit', '--select', 'stg_entity_0', '--out', file]);
    expect(saved.code, saved.stderr).toBe(0);
    expect(saved.stdout).toMatch(/^\^ submit stg_entity_0 /m);

    // Between the plan and the apply, a person submits it: PENDING_REVIEW on a fresh proof.
    const [{ id } = { id: '' }] = await server.sql<{ id: string }>(
      `SELECT id FROM gds.tables WHERE workspace_id = $1 AND active AND name = 'stg_entity_0'`,
      [server.ready.workspaceId],
    );
    const person = await server.request('POST', `/api/tables/${id}/gate-submissions`, {
      token: server.user('STEWARD').cliToken,
    });
    expect(person.status, JSON.stringify(person.body)).toBe(201);
    /** The table's submissions, steward notifications and submission audit entries. */
    const trail = async () =>
      (
        await server.sql<{ proofs: number; notified: number; audited: number }>(
          `SELECT (SELECT count(*)::int FROM gds.gate_proofs p WHERE p.table_id = t.id AND p.kind = 'submit') AS proofs,
                  (SELECT count(*)::int FROM gds.notifications n WHERE n.table_id = t.id) AS notified,
                  (SELECT count(*)::int FROM gds.audit_log a WHERE a.table_id = t.id AND a.action = 'GATE1_SUBMITTED')
                    AS audited
             FROM gds.tables t WHERE t.id = $1`,
          [id],
        )
      )[0];
    const submitted = await trail();
    expect((await states())['stg_entity_0']).toEqual({ state: 'PENDING_REVIEW', submitted: 3 });

    const applied = await gds(['apply', file, '--yes', '--json']);
    expect(applied.code, applied.stderr).toBe(0);
    const [action, ...others] = lines(applied.stdout).filter((a) => 'step' in a);
    expect(others).toEqual([]);
    expect(action).toMatchObject({ table: 'stg_entity_0', step: 'submit', outcome: 'unchanged' });
    expect(action?.['reason']).toContain('already submitted since the plan');
    const human = await gds(['apply', file, '--yes']);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stderr).toMatch(
      /^stg_entity_0 \(tbl_\w+\): submit no change \(already submitted since the plan/m,
    );
    expect(await trail()).toEqual(submitted);
    expect((await states())['stg_entity_0']).toEqual({ state: 'PENDING_REVIEW', submitted: 3 });
  });

  it('submits again a table a steward rejected whose semantic contract changed since its submission', async () => {
    const { gds, onDev, server } = shop;
    expect((await states())['raw_source_0']).toEqual({ state: 'QUARANTINED', submitted: 1 });
    const planned = async () => {
      const plan = await gds(['plan', ...onDev(), '--submit', '--select', 'raw_source_0', '--json']);
      expect(plan.code, plan.stderr).toBe(0);
      return lines(plan.stdout).find((l) => l['table'] === 'raw_source_0');
    };
    expect(await planned()).toMatchObject({ action: 'unchanged' });

    // The contract changes (set-intent by a steward): the rejected proof never checked it.
    const [{ id } = { id: '' }] = await server.sql<{ id: string }>(
      `SELECT id FROM gds.tables WHERE workspace_id = $1 AND active AND name = 'raw_source_0'`,
      [server.ready.workspaceId],
    );
    const intent = await server.request('PATCH', `/api/tables/${id}/semantic-contract`, {
      token: server.user('STEWARD').cliToken,
      body: { meaning: 'Raw source 0, as the steward reads it now' },
    });
    expect(intent.status, JSON.stringify(intent.body)).toBe(200);

    const line = await planned();
    expect(line).toMatchObject({ action: 'submit' });
    expect(line?.['reason']).toContain('not submitted as it is');
    const applied = await gds(['apply', ...onDev(), '--submit', '--select', 'raw_source_0', '--yes']);
    expect(applied.code, applied.stderr).toBe(0);
    expect((await states())['raw_source_0']).toEqual({ state: 'PENDING_REVIEW', submitted: 2 });
  });
});
