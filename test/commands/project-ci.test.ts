// What `gds plan` / `gds apply` tell CI (src/services/project-sources.ts, project-report.ts), with a real
// client against the in-process reference server on PGlite and PostgreSQL (the warehouse objects are read
// from the engine's information_schema): a source the connector does not read is `! refused` with a fix
// (--schema) that works when applied; each change names the CERTIFIED tables downstream of it in the dbt
// DAG; a write to a CERTIFIED table files a recertification request, which the plan announces and the
// apply action carries; and the summary both end with, a no-op included.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient } from '../../src/client/index.js';
import { declareDbtProject, prepareDbtReader } from '../../src/core/dbt/project.js';
import type { DbtReader } from '../../src/core/dbt/project.js';
import type { DbtProject } from '../../src/core/dbt/types.js';
import { applyPlan } from '../../src/services/project-apply.js';
import { planChanges, planProject } from '../../src/services/project-plan.js';
import type { ReportedAction } from '../../src/services/project-report.js';
import { applySummary, planSummary, recertificationMarker } from '../../src/services/project-report.js';
import { ENGINES } from '../helpers/engines.js';
import type { ProjectServer } from '../helpers/project-server.js';
import { startProjectServer } from '../helpers/project-server.js';
import type { TestServer } from '../helpers/server.js';
import { needs } from '../helpers/skip.js';
import { columns, genericTest, manifest, model } from '../core/dbt/helpers.js';

const describeError = (error: unknown) => error;
let dbtReader: DbtReader;

/** A shop of four models in dbt's schema `main`: customers <- orders <- ltv, and one never built. */
function shop(options: { notNull?: boolean } = {}): DbtProject {
  const notNull = options.notNull === true;
  return declareDbtProject(
    {
      manifest: manifest(
        model('ci_customers', { schema: 'main', columns: columns({ id: 'integer' }) }),
        model('ci_orders', {
          schema: 'main',
          columns: columns({ id: 'integer', customer_id: 'integer' }),
          depends_on: { nodes: ['model.shop.ci_customers'] },
        }),
        model('ci_ltv', {
          schema: 'main',
          columns: columns({ customer_id: 'integer', ltv: 'numeric' }),
          depends_on: { nodes: ['model.shop.ci_orders'] },
        }),
        model('ci_missing', { schema: 'main', columns: columns({ id: 'integer' }) }),
        genericTest('unique', 'model.shop.ci_orders', {}, { column: 'id' }),
        ...(notNull
          ? [
              genericTest('not_null', 'model.shop.ci_customers', {}, { column: 'id' }),
              genericTest('not_null', 'model.shop.ci_orders', {}, { column: 'customer_id' }),
            ]
          : []),
      ),
    },
    {},
    dbtReader,
  );
}

describe.each(ENGINES)('plan and apply for CI, on $engine', ({ postgres, skip }) => {
  let started: ProjectServer | undefined;
  let server: TestServer;
  let client: ApiClient;
  let dev: string;

  beforeAll(async () => {
    if (skip !== undefined) return;
    dbtReader = await prepareDbtReader();
    started = await startProjectServer({
      postgres,
      relations: {
        ci_customers: 'id integer',
        ci_orders: 'id integer, customer_id integer',
        ci_ltv: 'customer_id integer, ltv numeric',
      },
    });
    ({ server, client, dev } = started);
  });

  afterAll(() => started?.close());

  it(
    'an aliased model whose relation is not built is ! refused naming the model for --exclude',
    needs(skip),
    async () => {
      const aliased = declareDbtProject(
        {
          manifest: manifest(
            model('ci_aliased_model', {
              schema: 'analytics_dev',
              alias: 'ci_aliased_relation',
              columns: columns({ id: 'integer' }),
            }),
          ),
        },
        {},
        dbtReader,
      );
      const plan = await planProject(client, aliased, { connectorId: dev });
      expect(plan.tables.map((t) => [t.table, t.action])).toEqual([['ci_aliased_relation', 'refused']]);
      // dbt's selection knows the model by its name, never by its alias.
      expect(plan.tables[0]?.reason).toBe(
        "Source 'analytics_dev.ci_aliased_relation' is not a warehouse object on connector warehouse-dev (schema analytics_dev): build it there first (dbt run, dbt seed), or leave it out with --exclude ci_aliased_model",
      );
    },
  );

  it(
    'a source the connector does not read is ! refused with a --schema that works; apply then registers',
    needs(skip),
    async () => {
      const wrong = await planProject(client, shop(), { connectorId: 'warehouse-dev' });
      expect(wrong.tables.map((t) => [t.table, t.action])).toEqual([
        ['ci_customers', 'refused'],
        ['ci_orders', 'refused'],
        ['ci_ltv', 'refused'],
        ['ci_missing', 'refused'],
      ]);
      expect(wrong.tables[1]?.reason).toBe(
        "Source 'main.ci_orders' is not a warehouse object on connector warehouse-dev (schema analytics_dev), but analytics_dev.ci_orders is: pass --schema analytics_dev (or schema: in gds.yml)",
      );
      expect(wrong.tables[3]?.reason).toContain('nor is analytics_dev.ci_missing');
      expect(wrong.tables[3]?.reason).toContain('--exclude ci_missing');
      expect(planChanges(wrong, { prune: true })).toBe(false);
      expect(planSummary(wrong)).toEqual({
        create: 0,
        replace: 0,
        unchanged: 0,
        remove: 0,
        failed: 0,
        refused: 4,
        skipped: 0,
        submit: 0,
        recertificationRequested: 0,
      });

      // The fix the reason names.
      const fixed = await planProject(client, shop(), {
        connectorId: 'warehouse-dev',
        schema: 'analytics_dev',
      });
      expect(fixed.connector.id).toBe(dev);
      expect(fixed.tables.map((t) => [t.table, t.action])).toEqual([
        ['ci_customers', 'create'],
        ['ci_orders', 'create'],
        ['ci_ltv', 'create'],
        ['ci_missing', 'refused'],
      ]);
      expect(fixed.tables[3]?.reason).toBe(
        "Source 'analytics_dev.ci_missing' is not a warehouse object on connector warehouse-dev (schema analytics_dev): build it there first (dbt run, dbt seed), or leave it out with --exclude ci_missing",
      );
      const applied = await applyPlan(client, fixed, { describe: describeError });
      expect(applied.failed).toEqual([]);
      expect(applySummary(fixed, applied)).toEqual({
        create: 3,
        replace: 0,
        unchanged: 0,
        remove: 0,
        failed: 0,
        refused: 1,
        skipped: 0,
        submit: 0,
        recertificationRequested: 0,
      });
      // Nothing left to do: the summary of an apply that sends nothing is the plan's.
      const again = await planProject(client, shop(), { connectorId: dev, schema: 'analytics_dev' });
      expect(applySummary(again, undefined)).toMatchObject({
        create: 0,
        replace: 0,
        unchanged: 3,
        refused: 1,
      });
    },
  );

  it(
    'each change names the CERTIFIED tables downstream of it; a write to a CERTIFIED table files a recertification request, announced and marked',
    needs(skip),
    async () => {
      await server.sql(
        `UPDATE gds.tables SET state = 'CERTIFIED' WHERE workspace_id = $1 AND name IN ('ci_orders', 'ci_ltv')`,
        [server.ready.workspaceId],
      );
      const plan = await planProject(client, shop({ notNull: true }), {
        connectorId: dev,
        schema: 'analytics_dev',
      });
      const byName = new Map(plan.tables.map((t) => [t.table, t]));
      expect(byName.get('ci_customers')).toMatchObject({
        action: 'replace',
        downstreamCertified: ['ci_orders', 'ci_ltv'],
        recertificationRequested: false,
      });
      expect(byName.get('ci_orders')).toMatchObject({
        action: 'replace',
        changes: { gate1: true },
        downstreamCertified: ['ci_ltv'],
        recertificationRequested: true,
      });
      expect(byName.get('ci_ltv')).toMatchObject({
        action: 'unchanged',
        downstreamCertified: [],
        recertificationRequested: false,
      });
      expect(planSummary(plan)).toMatchObject({ replace: 2, unchanged: 1, recertificationRequested: 1 });

      const marker = recertificationMarker(plan);
      const reported: ReportedAction[] = [];
      const applied = await applyPlan(client, plan, {
        describe: describeError,
        onAction: (action) => reported.push(marker(action)),
      });
      expect(applied.failed).toEqual([]);
      const orders = byName.get('ci_orders')?.tableId;
      expect(reported.filter((a) => a.recertificationRequested === true)).toEqual([
        // The replacement files it (the table is then QUARANTINED); its gate1.yml, written next, files none.
        expect.objectContaining({ table: 'ci_orders', step: 'replace', outcome: 'done' }),
      ]);
      const requests = await server.sql<{ table_id: string }>(
        `SELECT table_id FROM gds.recertification_requests WHERE status = 'OPEN' AND table_id = ANY($1::text[])`,
        [[orders, byName.get('ci_customers')?.tableId]],
      );
      expect(requests.map((r) => r.table_id)).toEqual([orders]);
      expect(applySummary(plan, applied, reported)).toMatchObject({
        replace: 2,
        unchanged: 1,
        recertificationRequested: 1,
      });
    },
  );
});
