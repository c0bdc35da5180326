// The 409 of a push whose name or source a Mode A table of another environment holds names the promotion
// (gds env promote <id> --to <env>) only where it is true: for a table the caller could promote (its owner or a
// workspace admin, in the caller's environment scope), and where the promotion would land. A table of an
// environment the caller may not read is not named in the reason. Where both environments' connectors read one
// schema, the promotion would land on the very source the table holds: the reason says what would succeed.
import { describe, expect, it } from 'vitest';
import { ENGINES, useEngineServer } from '../helpers/engines.js';
import { needs } from '../helpers/skip.js';

describe.each(ENGINES)('the promotion a 409 names ($engine)', (engine) => {
  const started = useEngineServer(engine, { jobs: 'manual' });
  const connectorOf = (environment: string) =>
    started().ready.connectors.find((c) => c.environmentLabel === environment)?.id ?? '';
  const push = (role: 'OWNER' | 'ADMIN' | 'STEWARD' | 'MEMBER', content: string, connectorId: string) =>
    started().request('POST', '/api/artifacts', {
      token: started().user(role).cliToken,
      body: { filename: 'pushed.yml', content, connectorId },
    });

  it('not for a table of another person the caller is no admin over', needs(engine.skip), async () => {
    // orders (dev) is the member's; the steward (dev and staging) pushes its name to staging.
    const orders = started().table('orders').id;
    const response = await push(
      'STEWARD',
      'table: orders\nsource: analytics_staging.orders\ncolumns:\n  - name: id\n',
      connectorOf('staging'),
    );
    expect(response.status).toBe(409);
    expect(response.body.error.details).toMatchObject({ existingId: orders, replaceable: false });
    expect(response.body.error.details.reason).not.toContain('gds env promote');
    expect(response.body.error.details.reason).toContain('another table name');
    // Its owner is told the promotion.
    const owner = await push(
      'ADMIN',
      'table: orders\nsource: analytics_staging.orders\ncolumns:\n  - name: id\n',
      connectorOf('staging'),
    );
    expect(owner.body.error.details.reason).toContain(`gds env promote ${orders} --to staging`);
  });

  it('nor names a table of an environment the caller may not read', needs(engine.skip), async () => {
    // customers_production is in production; the member sees dev only.
    const held = started().table('customers_production');
    const response = await push(
      'MEMBER',
      'table: customers_production\nsource: analytics_dev.products\ncolumns:\n  - name: id\n',
      connectorOf('dev'),
    );
    expect(response.status).toBe(409);
    expect(response.body.error.code).toBe('name_conflict');
    const reason = String(response.body.error.details.reason);
    expect(reason).not.toContain('gds env promote');
    expect(reason).not.toContain(held.id);
    expect(reason).not.toContain('production');
    expect(reason).toContain('another table name');
  });

  it('nor a custody (Mode B) table of such an environment', needs(engine.skip), async () => {
    // A production custody table whose name has the slug the member pushes (crm_contacts): one name to the
    // service, but the member, who sees dev only, may not learn what production holds.
    const held = started().table('crm_contacts');
    await started().sql(
      `UPDATE gds.tables SET environment_label = 'production', name = 'CRM Contacts Prod', slug = 'crm_contacts_prod'
        WHERE id = $1`,
      [held.id],
    );
    const response = await push(
      'MEMBER',
      'table: crm_contacts_prod\nsource: analytics_dev.products\ncolumns:\n  - name: id\n',
      connectorOf('dev'),
    );
    expect(response.status).toBe(409);
    expect(response.body.error.code).toBe('name_conflict');
    expect(response.body.error.details).toMatchObject({ replaceable: false });
    expect(JSON.stringify(response.body)).not.toContain(held.id);
    const reason = String(response.body.error.details.reason);
    expect(reason).not.toContain('CRM Contacts Prod');
    expect(reason).toContain('another table name');
    // Its environment's people are told what it is.
    const admin = await push(
      'ADMIN',
      'table: crm_contacts_prod\nsource: analytics_dev.products\ncolumns:\n  - name: id\n',
      connectorOf('dev'),
    );
    expect(String(admin.body.error.details.reason)).toContain(
      "'CRM Contacts Prod' is a Mode B (custody) table",
    );
  });

  it(
    'not where both connectors read one schema: the promotion would take the source the table holds',
    needs(engine.skip),
    async () => {
      const orders = started().table('orders').id;
      await started().sql(`UPDATE gds.connectors SET warehouse_schema = 'analytics_dev' WHERE id = $1`, [
        connectorOf('staging'),
      ]);
      const content = 'table: orders_copy\nsource: analytics_dev.orders\ncolumns:\n  - name: id\n';
      const response = await push('OWNER', content, connectorOf('staging'));
      expect(response.status).toBe(409);
      expect(response.body.error.code).toBe('source_conflict');
      const reason = String(response.body.error.details.reason);
      expect(reason).not.toContain('gds env promote');
      expect(reason).toContain(`gds delete ${orders}`);
      // The promotion the reason used to name is refused: it lands on the source orders holds.
      const promoted = await started().request('POST', `/api/tables/${orders}/promotions`, {
        token: started().user('OWNER').cliToken,
        body: { to: 'staging' },
      });
      expect(promoted.status).toBe(409);
      expect(promoted.body.error.code).toBe('source_conflict');
      // Its own 409 gives no push's advice: deleting orders would leave nothing to promote.
      const refusal = String(promoted.body.error.details.reason);
      expect(refusal).not.toContain('gds delete');
      expect(refusal).not.toContain('gds env promote');
      expect(refusal).toContain('cannot be promoted to staging');
      // What it says instead succeeds: with orders deleted, the push lands.
      const deleted = await started().request('DELETE', `/api/tables/${orders}`, {
        token: started().user('OWNER').cliToken,
      });
      expect(deleted.status).toBe(200);
      expect((await push('OWNER', content, connectorOf('staging'))).status).toBe(202);
    },
  );
});
