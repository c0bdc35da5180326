// A member's environment scope `["*"]` is every environment, on every check that reads it (both engines):
// pushing to a connector, minting a token for `*` or a named environment, and the environments /api/me
// reports for a token minted in one. A member scoped to `["dev"]` still reaches no further than dev.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../helpers/engines.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';
import { needs } from '../helpers/skip.js';

describe.each(ENGINES)('env_scope ["*"] on $engine', (engine) => {
  let server: TestServer;

  beforeAll(async () => {
    if (engine.skip !== undefined) return;
    server = await startTestServer({
      jobs: 'manual',
      ...(engine.postgres ? { database: 'postgres' as const } : {}),
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  // The seeded steward (scope dev and staging) is rescoped in the database, as an admin's change would be.
  const scopeSteward = (envScope: string[]) =>
    server.sql(
      `UPDATE gds.memberships SET env_scope = $2 WHERE user_id = (SELECT id FROM gds.users WHERE email = $1)`,
      [server.user('STEWARD').email, JSON.stringify(envScope)],
    );
  const connector = (environmentLabel: string) => {
    const found = server.ready.connectors.find((c) => c.environmentLabel === environmentLabel);
    if (!found) throw new Error(`no ${environmentLabel} connector`);
    return found.id;
  };
  const push = (table: string, environmentLabel: string, source: string, column = 'id') =>
    server.request('POST', '/api/artifacts', {
      token: server.user('STEWARD').cliToken,
      body: {
        filename: `${table}.yml`,
        content: [`table: ${table}`, `source: ${source}`, 'columns:', `  - name: ${column}`].join('\n'),
        connectorId: connector(environmentLabel),
      },
    });
  const mint = (env: string) =>
    server.request('POST', '/api/integration/tokens', {
      token: server.user('STEWARD').accessToken,
      body: { name: `steward-${env}`, env, scopes: ['workspace:write:definition'] },
    });

  it('lets a member scoped to * push to a connector of any environment', needs(engine.skip), async () => {
    await scopeSteward(['*']);
    const pushed = await push('prod_orders_any', 'production', 'analytics_prod.orders');
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(202);
    const dev = await push('dev_categories_any', 'dev', 'analytics_dev.categorydim', 'category_id');
    expect(dev.status, JSON.stringify(dev.body)).toBe(202);
  });

  it(
    'lets a member scoped to * mint a token for * and for a named environment',
    needs(engine.skip),
    async () => {
      await scopeSteward(['*']);
      for (const env of ['*', 'production', 'dev']) {
        const minted = await mint(env);
        expect(minted.status, `${env}: ${JSON.stringify(minted.body)}`).toBe(201);
      }
      const production = (await mint('production')).body.tokens.accessToken as string;
      const me = await server.request('GET', '/api/me', { token: production });
      expect(me.status).toBe(200);
      expect(me.body.effectiveEnvironmentScope).toEqual(['production']);
    },
  );

  it('keeps a member scoped to dev out of production and *', needs(engine.skip), async () => {
    await scopeSteward(['dev']);
    const pushed = await push('prod_orders_dev', 'production', 'analytics_prod.orders');
    expect(pushed.status).toBe(403);
    expect(pushed.body.error.code).toBe('environment_mismatch');
    for (const env of ['production', '*']) {
      const minted = await mint(env);
      expect(minted.status, env).toBe(403);
      expect(minted.body.error.code).toBe('environment_not_in_scope');
    }
    expect((await mint('dev')).status).toBe(201);
  });
});
