// Table-driven: the 409 of a registration whose name another table holds gives that table's id (details.existingId)
// to exactly the callers who may read it. A person (session JWT or static CLI token), whatever their role or the
// table's owner or mode, is told it exactly when `gds status` of that table answers them (GET
// /api/tables/{id}/status, 200). A MANAGEMENT token, which reads no table's status, is told it exactly when it
// may act on the table: of the token's environment, and its issuer owns it or is a workspace admin (§2.2).
import { describe, expect, it } from 'vitest';
import { ENGINES, useEngineServer } from '../../helpers/engines.js';
import { needs } from '../../helpers/skip.js';

const ROLES = ['OWNER', 'ADMIN', 'STEWARD', 'MEMBER'] as const;

describe.each(ENGINES)('who a 409 names the holder to ($engine)', (engine) => {
  const started = useEngineServer(engine, { jobs: 'manual' });

  /** The seed's holders: own or another's, in or out of a caller's scope, Mode A and B. */
  async function holders() {
    // legacy_leads (the seed's soft-deleted Mode B table) active again, in production: a custody table out of
    // the steward's and the member's scope.
    await started().sql(
      `UPDATE gds.tables SET active = true, environment_label = 'production' WHERE id = $1`,
      [started().table('legacy_leads').id],
    );
    return ['customers', 'orders', 'customers_production', 'crm_contacts', 'legacy_leads'].map((name) => {
      const t = started().table(name);
      return {
        id: t.id,
        name,
        ownerId: t.ownerId,
        environment: name === 'legacy_leads' ? 'production' : t.environmentLabel,
      };
    });
  }
  const connector = (environment: string) =>
    started().ready.connectors.find((c) => c.environmentLabel === environment) ?? { id: '', schema: '' };
  const body = (name: string, environment: string) => ({
    filename: 'held.yml',
    content: `table: ${name}\nsource: ${connector(environment).schema}.orders\ncolumns:\n  - name: id\n`,
    mimeType: 'yaml',
    connectorId: connector(environment).id,
  });

  it('a person: session JWT or CLI token, each role, each holder', needs(engine.skip), async () => {
    const rows: string[] = [];
    for (const holder of await holders()) {
      for (const role of ROLES) {
        const user = started().user(role);
        for (const [credential, token] of [
          ['session', user.accessToken],
          ['cli token', user.cliToken],
        ] as const) {
          const status = await started().request('GET', `/api/tables/${holder.id}/status`, { token });
          const response = await started().request('POST', '/api/artifacts/dry-run', {
            token,
            body: body(holder.name, 'dev'),
          });
          const told = response.body?.error?.details?.existingId;
          rows.push(
            `${role} ${credential} ${holder.name}: status ${status.status}, 409 ${response.status}, told ${told === holder.id}`,
          );
          expect(response.status).toBe(409);
          expect(told === holder.id).toBe(status.status === 200);
          if (status.status !== 200) expect(JSON.stringify(response.body)).not.toContain(holder.id);
        }
      }
    }
    expect(rows).toHaveLength(5 * 4 * 2);
  });

  it('a MANAGEMENT token, each role, of dev and of production, each holder', needs(engine.skip), async () => {
    const tables = await holders();
    let tried = 0;
    for (const role of ROLES) {
      const user = started().user(role);
      for (const env of ['dev', 'production']) {
        const issued = await started().request('POST', '/api/integration/tokens', {
          token: user.accessToken,
          body: { name: `holder-${role}-${env}`, env, scopes: ['workspace:write:definition'] },
        });
        // A role that may not issue such a token, or not of that environment, has none to try.
        if (issued.status !== 201) continue;
        const token = issued.body.tokens.accessToken as string;
        for (const holder of tables) {
          const response = await started().request('POST', '/api/workspace/definitions', {
            token,
            body: body(holder.name, env),
          });
          tried += 1;
          const mayAct =
            holder.environment === env &&
            (holder.ownerId === user.userId || role === 'OWNER' || role === 'ADMIN');
          expect(response.status, `${role} ${env} ${holder.name} ${JSON.stringify(response.body)}`).toBe(409);
          expect(response.body.error.details.existingId === holder.id, `${role} ${env} ${holder.name}`).toBe(
            mayAct,
          );
          if (!mayAct) expect(JSON.stringify(response.body)).not.toContain(holder.id);
        }
      }
    }
    // OWNER and ADMIN of dev and of production, STEWARD of dev (a member issues none), each of 5 holders.
    expect(tried).toBe(5 * 5);
  });
});
