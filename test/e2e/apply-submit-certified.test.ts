// `gds apply --submit` on a table a steward certified, in the test process against the reference server: a
// change that leaves the table CERTIFIED (its contract intent) is applied, and the table is not submitted
// again (a routine CI run does not undo a certification): it stays CERTIFIED, its submit step is `unchanged`
// with a reason (human output and --json), and `plan --submit` says so beforehand. A change of its definition
// (QUARANTINED, a recertification request filed) is still submitted for review.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GeneratedProject } from './generated-project.js';
import { SCHEMA, generatedProject, jsonLines as lines } from './generated-project.js';

let shop: GeneratedProject;
const TABLE = 'stg_entity_1';
const NOT_SUBMITTED = `CERTIFIED: apply --submit does not submit it again (it stays CERTIFIED); gds gate submit ${TABLE} submits it for review`;

/** The table's lifecycle state and how many times it was submitted. */
async function held(): Promise<{ state: string; submitted: number }> {
  const [row] = await shop.server.sql<{ state: string; submitted: number }>(
    `SELECT t.state,
            (SELECT count(*)::int FROM gds.gate_proofs p WHERE p.table_id = t.id AND p.kind = 'submit') AS submitted
       FROM gds.tables t
      WHERE t.workspace_id = $1 AND t.active AND t.name = $2`,
    [shop.server.ready.workspaceId, TABLE],
  );
  if (row === undefined) throw new Error(`${TABLE} is not registered`);
  return { state: row.state, submitted: row.submitted };
}

/** Sets the model's contract intent (meta.gds), as a dbt change that leaves the table's definition alone. */
function setIntent(contract: Record<string, unknown>): Promise<void> {
  return shop.editManifest((manifest) => {
    const node = manifest.nodes[`model.shop.${TABLE}`];
    if (node === undefined) throw new Error(`no ${TABLE} in the generated manifest`);
    node.config = { ...node.config, meta: { gds: contract } };
  });
}

beforeAll(async () => {
  shop = await generatedProject('submit-certified');
});

afterAll(async () => {
  await shop?.close();
});

describe('gds apply --submit on a CERTIFIED table', { timeout: 300_000 }, () => {
  it('leaves it CERTIFIED when the change keeps it so, and says why; a changed definition is submitted', async () => {
    const { gds, onDev, server } = shop;
    const select = ['--select', TABLE];
    // A row that passes Gate 1 (record_count and accepted_values on its status among its rules): a steward can
    // certify the table.
    const columns = await server.sql<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2`,
      [SCHEMA, TABLE],
    );
    await server.sql(
      `INSERT INTO ${SCHEMA}."${TABLE}" (${columns.map((c) => `"${c.column_name}"`).join(', ')})
       VALUES (${columns.map((c) => (c.column_name === 'status' ? "'placed'" : "'1'")).join(', ')})`,
    );
    const first = await gds(['apply', ...onDev(), ...select, '--submit', '--yes']);
    expect(first.code, first.stderr).toBe(0);
    expect(await held()).toEqual({ state: 'PENDING_REVIEW', submitted: 1 });
    const [table] = await server.sql<{ id: string }>(
      `SELECT id FROM gds.tables WHERE workspace_id = $1 AND active AND name = $2`,
      [server.ready.workspaceId, TABLE],
    );
    const tableId = table?.id ?? '';
    const certified = await server.request('POST', `/api/tables/${tableId}/semantic-contract/certify`, {
      token: server.user('STEWARD').accessToken,
      body: {},
    });
    expect(certified.status, JSON.stringify(certified.body)).toBe(200);
    expect(await held()).toEqual({ state: 'CERTIFIED', submitted: 1 });

    // Its contract intent changes: the contract is written, the table stays CERTIFIED, nothing is submitted.
    await setIntent({ intent: 'DECISION' });
    const plan = await gds(['plan', ...onDev(), ...select, '--submit']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.stdout).toContain(
      `~ replace ${TABLE} (${SCHEMA}.${TABLE}, ${tableId})\n    ${NOT_SUBMITTED}\n`,
    );
    const planJson = await gds(['plan', ...onDev(), ...select, '--submit', '--json']);
    expect(planJson.code, planJson.stderr).toBe(0);
    expect(lines(planJson.stdout).find((l) => l['table'] === TABLE)).toMatchObject({
      action: 'replace',
      reason: NOT_SUBMITTED,
    });

    const applied = await gds(['apply', ...onDev(), ...select, '--submit', '--yes', '--json']);
    expect(applied.code, applied.stderr).toBe(0);
    expect(lines(applied.stdout).filter((a) => 'step' in a)).toEqual([
      { table: TABLE, tableId, step: 'contract', outcome: 'done' },
      { table: TABLE, tableId, step: 'submit', outcome: 'unchanged', reason: NOT_SUBMITTED },
    ]);
    expect(await held()).toEqual({ state: 'CERTIFIED', submitted: 1 });

    // The human output says it too.
    await setIntent({ intent: 'DECISION', allowed_consumers: ['HUMAN'] });
    const human = await gds(['apply', ...onDev(), ...select, '--submit', '--yes']);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stderr).toContain(`${TABLE} (${tableId}): submit no change (${NOT_SUBMITTED})`);
    expect(await held()).toEqual({ state: 'CERTIFIED', submitted: 1 });

    // A changed definition makes it QUARANTINED (a recertification request filed): that is submitted.
    await shop.editManifest((manifest) => {
      const node = manifest.nodes[`model.shop.${TABLE}`];
      if (node === undefined) throw new Error(`no ${TABLE} in the generated manifest`);
      node.description = 'Entities, one row each, after the change';
    });
    const replaced = await gds(['apply', ...onDev(), ...select, '--submit', '--yes', '--json']);
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(lines(replaced.stdout).filter((a) => a['step'] === 'submit')).toEqual([
      { table: TABLE, tableId, step: 'submit', outcome: 'done' },
    ]);
    expect(await held()).toEqual({ state: 'PENDING_REVIEW', submitted: 2 });
  });
});
