// gds apply never writes onto a table another dbt project owns, nor onto a table of another name (planProject and
// applyPlan against the in-process reference server, on PGlite and PostgreSQL, in batches and table by table):
// a table another project registered or adopted between a plan and its apply keeps its definition, gate1.yml,
// contract and state (every step of the loser is 409 `owned_elsewhere`, as the service answers it under the
// table's lock); the service refuses gate1.yml, contract intent and submission naming another project; and a
// model whose name has the slug of another table's (`sl-orders` beside `sl_orders`) is refused by the plan,
// and a stale plan's create never becomes a replacement (a rename) of that table.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/client/errors.js';
import { CliError, exitCodeForStatus } from '../../src/core/errors.js';
import type { ApiClient } from '../../src/client/index.js';
import { formatSourceRef } from '../../src/core/artifacts/identifiers.js';
import type { DbtDeclaration, DbtProject } from '../../src/core/dbt/types.js';
import type { ApplySummary } from '../../src/services/project-apply.js';
import { applyPlan } from '../../src/services/project-apply.js';
import { planProject } from '../../src/services/project-plan.js';
import type { ProjectPlan } from '../../src/services/project-plan-types.js';
import { dbtDeclaration, dbtProjectOf } from '../helpers/dbt-declaration.js';
import { ENGINES } from '../helpers/engines.js';
import type { ProjectServer } from '../helpers/project-server.js';
import { startProjectServer } from '../helpers/project-server.js';
import { needs } from '../helpers/skip.js';

/** A failure as the person sees it: a service's refusal exits by its status (the session's mapping). */
const describeError = (error: unknown) =>
  error instanceof CliError
    ? error
    : error instanceof ApiError
      ? new CliError(error.message, { exitCode: exitCodeForStatus(error.status), code: error.code })
      : new CliError(String(error), { exitCode: 1 });

/**
 * A model as team `team` declares it: the teams' gate1.yml and contract meaning differ, their definitions do
 * not. Its source is quoted as dbt's reader quotes it (`analytics_dev."sl-orders"`).
 */
function model(name: string, team: 'a' | 'b'): DbtDeclaration {
  const declaration = dbtDeclaration(name, 'shop');
  const artifact = JSON.parse(declaration.artifact.content) as Record<string, unknown>;
  artifact['source'] = formatSourceRef(declaration.source);
  return {
    ...declaration,
    artifact: { ...declaration.artifact, content: JSON.stringify(artifact) },
    gate1Yaml: `fieldOverrides:\n  - field: id\n    nullRate: { warn: 0, fail: ${team === 'a' ? '0' : '0.5'} }\n`,
    contract: { ...declaration.contract, meaning: `one order, as team ${team} reads it` },
  };
}

const projectOf = (names: string[], team: 'a' | 'b'): DbtProject => ({
  ...dbtProjectOf('shop', []),
  declarations: names.map((name) => model(name, team)),
  nodeNames: names,
});

const MODES = [
  { mode: 'in batches', batch: true },
  { mode: 'table by table', batch: false },
] as const;

const RACED = MODES.flatMap(({ batch }) => [0, 1].map((i) => `ow_race_${batch ? 'b' : 't'}_${i}`));
const ADOPTED = MODES.flatMap(({ batch }) => [
  `ow_adopt_${batch ? 'b' : 't'}`,
  `ow_late_${batch ? 'b' : 't'}`,
]);

describe.each(ENGINES)('apply writes only its own project’s tables on $engine', ({ postgres, skip }) => {
  let started: ProjectServer | undefined;
  beforeAll(async () => {
    if (skip !== undefined) return;
    const names = [...RACED, ...ADOPTED, 'ow_single', 'sl_orders', 'sl_items', 'sl_twin'];
    const dashed = ['"sl-orders"', '"sl-items"', '"sl-twin"'];
    started = await startProjectServer({
      postgres,
      relations: Object.fromEntries([...names, ...dashed].map((name) => [name, 'id integer, label text'])),
    });
  });
  afterAll(() => started?.close());
  /** The server, its client and dev connector (read once the tests run). */
  const the = () => started as ProjectServer;

  const plan = (names: string[], team: 'a' | 'b', project = `shop_${team}`) =>
    planProject(the().client, projectOf(names, team), { connectorId: the().dev, project });

  /** Applies `project`'s plan of `names` (team a's) and checks nothing failed; answers the tables' ids. */
  const applied = async (names: string[], project: string): Promise<string[]> => {
    const planned = await plan(names, 'a', project);
    expect((await applyPlan(the().client, planned, { describe: describeError })).failed).toEqual([]);
    return Promise.all(names.map(async (name) => (await the().client.tables.list({ name }))[0]?.id ?? ''));
  };

  /** Project shop_b takes over shop_a's table (gds apply --adopt). */
  const adoptByB = (tableId: string) =>
    the().client.tables.setProject(tableId, { project: 'shop_b', previous: 'shop_a', reason: 'adopt' });

  /** What a user would see changed on a table: its owner, name, versions, contract and lifecycle state. */
  const held = (names: string[]) =>
    the().server.sql<Record<string, unknown>>(
      `SELECT t.name, t.project, t.state, t.definition_version, t.gate1_version,
              (SELECT count(*)::int FROM gds.audit_log a WHERE a.table_id = t.id AND a.action = 'CONTRACT_INTENT_SET') AS intents
         FROM gds.tables t WHERE t.active AND t.name = ANY($1) ORDER BY t.name`,
      [names],
    );

  /** Every step of `summary`: none written, each failure 409 owned_elsewhere (exit 6). */
  const refusedOnly = (summary: ApplySummary) => {
    expect(summary.actions.filter((a) => a.outcome !== 'failed')).toEqual([]);
    expect(summary.failed.length).toBeGreaterThan(0);
    expect(summary.failed.map((f) => [f.error.exitCode, f.error.code])).toEqual(
      summary.failed.map(() => [6, 'owned_elsewhere']),
    );
  };

  describe.each(MODES)('$mode', ({ batch }) => {
    const tag = batch ? 'b' : 't';
    const apply = (client: ApiClient, planned: ProjectPlan, submit = true) =>
      applyPlan(client, planned, { describe: describeError, batch, submit });

    /** shop_a's table `ow_<what>_<tag>`, and shop_a's plan changing its tests and contract (gate1.yml, intent). */
    const changedTests = async (what: string) => {
      const name = `ow_${what}_${tag}`;
      const [tableId = ''] = await applied([name], 'shop_a');
      const planned = await plan([name], 'b', 'shop_a');
      expect(planned.tables[0]).toMatchObject({
        action: 'replace',
        changes: { definition: false, gate1: true, contract: true },
      });
      return { name, tableId, planned };
    };

    it(
      'two projects planned the same models: the one applying second refuses the other’s tables, writing nothing',
      needs(skip),
      async () => {
        const names = [0, 1].map((i) => `ow_race_${tag}_${i}`);
        const planA = await plan(names, 'a');
        const planB = await plan(names, 'b');
        expect(planA.tables.map((t) => t.action)).toEqual(['create', 'create']);
        expect((await apply(the().client, planB, false)).failed).toEqual([]);
        const before = await held(names);
        expect(before.map((t) => t['project'])).toEqual(['shop_b', 'shop_b']);

        const late = await apply(the().client, planA);
        refusedOnly(late);
        expect(late.failed.map((f) => f.table).sort()).toEqual(names);
        expect(await held(names)).toEqual(before);
      },
    );

    it(
      'a table adopted by another project between plan and apply: its gate1.yml, contract and state stay',
      needs(skip),
      async () => {
        const { name, tableId, planned } = await changedTests('adopt');
        await adoptByB(tableId);
        const before = await held([name]);

        refusedOnly(await apply(the().client, planned));
        expect(await held([name])).toEqual(before);
      },
    );

    it(
      'a table adopted by another project between its write and its submission stays as it is',
      needs(skip),
      async () => {
        const { name, tableId, planned } = await changedTests('late');
        const { client } = the();
        // The other project takes the table over right before the submission.
        const adoptingFirst: ApiClient = {
          ...client,
          gates: {
            ...client.gates,
            submit: async (...args) => {
              await adoptByB(tableId);
              return client.gates.submit(...args);
            },
          },
        };
        const { state } = (await held([name]))[0] ?? {};
        const summary = await apply(adoptingFirst, planned);
        expect(summary.failed.map((f) => [f.table, f.step, f.error.exitCode, f.error.code])).toEqual([
          [name, 'submit', 6, 'owned_elsewhere'],
        ]);
        expect(state).not.toBe('PENDING_REVIEW');
        expect((await held([name]))[0]).toMatchObject({ project: 'shop_b', state });
      },
    );
  });

  it(
    'the service refuses gate1.yml, contract intent and submission naming another project, and writes them for the owner',
    needs(skip),
    async () => {
      const { server } = the();
      const [id = ''] = await applied(['ow_single'], 'shop_a');
      const send = (method: string, path: string, body: unknown) =>
        fetch(`${server.url}${path}`, {
          method,
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${server.user('ADMIN').cliToken}`,
          },
          body: JSON.stringify(body),
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));
      const gate1 = model('ow_single', 'b').gate1Yaml;
      const before = await held(['ow_single']);
      const refusal = {
        status: 409,
        body: {
          error: {
            code: 'owned_elsewhere',
            message: expect.stringContaining('owned by project shop_a, not by shop_b') as string,
            details: { tableId: id, project: 'shop_a' },
          },
        },
      };
      const writes = (project: string) =>
        [
          ['PUT', `/api/tables/${id}/gate1?project=${project}`, { content: gate1 }],
          ['PATCH', `/api/tables/${id}/semantic-contract?project=${project}`, { meaning: project }],
          ['POST', `/api/tables/${id}/gate-submissions?project=${project}`, {}],
        ] as const;
      for (const [method, path, body] of writes('shop_b'))
        expect(await send(method, path, body)).toMatchObject(refusal);
      const batch = await send('POST', '/api/artifacts/batch', {
        items: [
          {
            tableId: id,
            project: 'shop_b',
            gate1: { content: gate1 },
            intent: { request: { meaning: 'x' } },
          },
        ],
      });
      expect(batch.body['results']).toEqual([
        {
          index: 0,
          tableId: id,
          gate1: { status: 409, changed: false, error: refusal.body },
        },
      ]);
      // An item stops at its first refused step: the intent was not tried (nor written) either.
      const intentOnly = await send('POST', '/api/artifacts/batch', {
        items: [{ tableId: id, project: 'shop_b', intent: { request: { meaning: 'x' } } }],
      });
      expect(intentOnly.body['results']).toEqual([
        { index: 0, tableId: id, contract: { status: 409, changed: false, error: refusal.body } },
      ]);
      // An item naming one project and a definition naming another is refused whole.
      const { content } = model('ow_single', 'a').artifact;
      const definition = {
        filename: 'ow_single.json',
        content,
        mimeType: 'json',
        replaceId: id,
        project: 'shop_a',
      };
      const mixed = await send('POST', '/api/artifacts/batch', {
        items: [{ definition, project: 'shop_b', gate1: { content: gate1 } }],
      });
      expect(mixed.body['results']).toMatchObject([
        {
          index: 0,
          tableId: null,
          definition: { status: 400, error: { error: { code: 'invalid_request' } } },
        },
      ]);
      expect(await held(['ow_single'])).toEqual(before);

      // The owner's own writes go through.
      const statuses: number[] = [];
      for (const [method, path, body] of writes('shop_a'))
        statuses.push((await send(method, path, body)).status);
      expect(statuses).toEqual([200, 200, 201]);
    },
  );

  it(
    'a model named with another table’s slug (sl-orders beside sl_orders) is refused by the plan; nothing is renamed',
    needs(skip),
    async () => {
      // sl_orders is another team's table; this project's new model is aliased sl-orders.
      const [ordersId = ''] = await applied(['sl_orders'], 'orders_team');
      const before = await held(['sl_orders']);
      const planned = await plan(['sl-orders'], 'a', 'slugs');
      expect(planned.tables.map((t) => [t.table, t.action])).toEqual([['sl-orders', 'refused']]);
      expect(planned.tables[0]?.reason).toBe(
        `the name sl-orders is table sl_orders's (${ordersId}, analytics_dev.sl_orders, dev, project orders_team) to the service, which compares table names lowered and with each run of other characters than letters, digits and _ made one _ (both are sl_orders): give the model another alias (dbt's alias config), or leave it out with --exclude`,
      );
      expect((await applyPlan(the().client, planned, { describe: describeError })).actions).toEqual([]);
      expect(await held(['sl_orders', 'sl-orders'])).toEqual(before);
    },
  );

  it(
    'a stale plan’s create of sl-items fails once sl_items is registered: the table is not renamed',
    needs(skip),
    async () => {
      const stale = await plan(['sl-items'], 'a', 'stale');
      expect(stale.tables.map((t) => [t.table, t.action, t.reason])).toEqual([
        ['sl-items', 'create', undefined],
      ]);
      const [itemsId = ''] = await applied(['sl_items'], 'stale');
      const before = await held(['sl_items', 'sl-items']);
      for (const batch of [true, false]) {
        const summary = await applyPlan(the().client, stale, { describe: describeError, batch });
        expect(summary.actions.filter((a) => a.outcome !== 'failed')).toEqual([]);
        expect(summary.failed.map((f) => [f.table, f.step, f.error.exitCode, f.error.code])).toEqual([
          ['sl-items', 'register', 6, 'name_conflict'],
        ]);
        expect(summary.failed[0]?.error.message).toContain(`table sl_items (${itemsId})`);
        expect(await held(['sl_items', 'sl-items'])).toEqual(before);
      }
    },
  );

  it(
    'two new models of one slug (sl_twin, sl-twin) are both refused; once sl_twin is registered, only sl-twin',
    needs(skip),
    async () => {
      const planned = await plan(['sl_twin', 'sl-twin'], 'a', 'twins');
      expect(planned.tables.map((t) => [t.table, t.action])).toEqual([
        ['sl_twin', 'refused'],
        ['sl-twin', 'refused'],
      ]);
      expect(planned.tables[0]?.reason).toBe(
        "model.shop.sl-twin (analytics_dev.sl-twin) is named sl-twin, the same table name as sl_twin to the service, which compares table names lowered and with each run of other characters than letters, digits and _ made one _ (sl_twin): give all but one of them another alias (dbt's alias config), or leave all but one out with --exclude",
      );
      expect((await applyPlan(the().client, planned, { describe: describeError })).actions).toEqual([]);
      expect(await held(['sl_twin', 'sl-twin'])).toEqual([]);

      // The project had sl_twin first; sl-twin is the model added beside it (the audit's raw-source-0).
      const [twinId = ''] = await applied(['sl_twin'], 'twins');
      const before = await held(['sl_twin', 'sl-twin']);
      const added = await plan(['sl_twin', 'sl-twin'], 'a', 'twins');
      expect(added.tables.map((t) => [t.table, t.action])).toEqual([
        ['sl_twin', 'unchanged'],
        ['sl-twin', 'refused'],
      ]);
      expect(added.tables[1]?.reason).toContain(`the name sl-twin is table sl_twin's (${twinId}, `);
      expect((await applyPlan(the().client, added, { describe: describeError })).actions).toEqual([]);
      expect(await held(['sl_twin', 'sl-twin'])).toEqual(before);
    },
  );
});
