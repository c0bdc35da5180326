// The 409 of a registration whose name or source another table holds names that table (details.existingId)
// only to a caller who may read it: a person in whose environment scope it is (as `gds status` reads it), a
// MANAGEMENT token whose issuer owns it or is a workspace admin, in the token's environment (as a replaceId
// acts on it). To any other caller it says that a table it cannot see holds the name or source, and who to ask.
import { describe, expect, it } from 'vitest';
import { ENGINES, useEngineServer } from '../../helpers/engines.js';
import { needs } from '../../helpers/skip.js';

describe.each(ENGINES)('the holder a 409 names ($engine)', (engine) => {
  const started = useEngineServer(engine, { jobs: 'manual' });
  const connectorOf = (environment: string) =>
    started().ready.connectors.find((c) => c.environmentLabel === environment)?.id ?? '';
  const definitions = (token: string, content: string, connectorId: string, replaceId?: string) =>
    started().request('POST', '/api/workspace/definitions', {
      token,
      body: {
        filename: 'defined.yml',
        content,
        mimeType: 'yaml',
        connectorId,
        ...(replaceId === undefined ? {} : { replaceId }),
      },
    });
  const managementToken = async (role: 'ADMIN' | 'STEWARD', env: string) =>
    (
      await started().issueToken(role, {
        name: `definer-${role}-${env}`,
        env,
        scopes: ['workspace:write:definition'] as never,
      })
    ).tokens.accessToken;
  const tableCount = async () =>
    Number((await started().sql(`SELECT count(*) AS n FROM gds.tables WHERE active`))[0]?.n);

  it(
    "a steward's MANAGEMENT token is not told the id of another person's table of its environment",
    needs(engine.skip),
    async () => {
      const orders = started().table('orders').id; // the member's, in dev
      const before = await tableCount();
      const token = await managementToken('STEWARD', 'dev');
      const response = await definitions(
        token,
        'table: orders\nsource: analytics_dev.products\ncolumns:\n  - name: id\n',
        connectorOf('dev'),
      );
      expect(response.status).toBe(409);
      expect(response.body.error.code).toBe('name_conflict');
      expect(response.body.error.details.existingId).toBeUndefined();
      expect(response.body.error.details.replaceable).toBe(false);
      expect(JSON.stringify(response.body)).not.toContain(orders);
      expect(response.body.error.details.reason).toContain('a table you cannot see');
      expect(response.body.error.details.reason).toContain('its owner or a workspace admin');
      expect(await tableCount()).toBe(before);
      // Its source too.
      const bySource = await definitions(
        token,
        'table: orders_again\nsource: analytics_dev.orders\ncolumns:\n  - name: id\n',
        connectorOf('dev'),
      );
      expect(bySource.status).toBe(409);
      expect(bySource.body.error.code).toBe('source_conflict');
      expect(JSON.stringify(bySource.body)).not.toContain(orders);
    },
  );

  it(
    'the same token is told the id of its issuer’s own table, and an admin’s token any',
    needs(engine.skip),
    async () => {
      const customers = started().table('customers').id; // the steward's, in dev
      const own = await definitions(
        await managementToken('STEWARD', 'dev'),
        'table: customers\nsource: analytics_dev.products\ncolumns:\n  - name: id\n',
        connectorOf('dev'),
      );
      expect(own.status).toBe(409);
      expect(own.body.error.details).toMatchObject({ existingId: customers, replaceable: true });
      const orders = started().table('orders').id;
      const admin = await definitions(
        await managementToken('ADMIN', 'dev'),
        'table: orders\nsource: analytics_dev.products\ncolumns:\n  - name: id\n',
        connectorOf('dev'),
      );
      expect(admin.status).toBe(409);
      expect(admin.body.error.details).toMatchObject({ existingId: orders, replaceable: true });
    },
  );

  it(
    'a token of dev is not told the id of a production table, even its issuer’s',
    needs(engine.skip),
    async () => {
      const held = started().table('customers_production'); // the owner's, in production
      const response = await definitions(
        await managementToken('ADMIN', 'dev'),
        'table: customers_production\nsource: analytics_dev.products\ncolumns:\n  - name: id\n',
        connectorOf('dev'),
      );
      expect(response.status).toBe(409);
      expect(response.body.error.details.existingId).toBeUndefined();
      expect(JSON.stringify(response.body)).not.toContain(held.id);
      expect(response.body.error.details.reason).toContain('a table you cannot see');
    },
  );

  it(
    'a person is not told the id of a table of an environment outside their scope',
    needs(engine.skip),
    async () => {
      const push = (role: 'MEMBER' | 'STEWARD', name: string) =>
        started().request('POST', '/api/artifacts', {
          token: started().user(role).cliToken,
          body: {
            filename: 'pushed.yml',
            content: `table: ${name}\nsource: analytics_dev.products\ncolumns:\n  - name: id\n`,
            connectorId: connectorOf('dev'),
          },
        });
      const held = started().table('customers_production');
      const response = await push('MEMBER', 'customers_production');
      expect(response.status).toBe(409);
      expect(response.body.error.details.existingId).toBeUndefined();
      expect(JSON.stringify(response.body)).not.toContain(held.id);
      // A person in its environment reads it (gds status), so is told it, whoever owns it.
      const steward = await push('STEWARD', 'orders');
      expect(steward.status).toBe(409);
      expect(steward.body.error.details).toMatchObject({ existingId: started().table('orders').id });
    },
  );

  it(
    'a replacement taking the name of a table the token cannot see does not name it',
    needs(engine.skip),
    async () => {
      const customers = started().table('customers').id; // the steward's
      const orders = started().table('orders').id; // the member's
      const response = await definitions(
        await managementToken('STEWARD', 'dev'),
        'table: orders\nsource: analytics_dev.customers\ncolumns:\n  - name: id\n',
        connectorOf('dev'),
        customers,
      );
      expect(response.status).toBe(409);
      expect(response.body.error.code).toBe('name_conflict');
      expect(JSON.stringify(response.body)).not.toContain(orders);
      expect(response.body.error.message).toContain('A table you cannot see holds');
      const [row] = await started().sql(`SELECT name FROM gds.tables WHERE id = $1`, [customers]);
      expect(row?.name).toBe('customers');
    },
  );
});
