// An environment a promotion can name but not land in: its only connector INACTIVE. The seeded people's
// scopes list dev, staging and production, so a member whose e-mail is given also gets it in their scope (a
// promotion there then meets the missing connector, not the scope).
import type { TestServer } from './server.js';

export async function addIdleEnvironment(
  server: Pick<TestServer, 'sql' | 'ready'>,
  label: string,
  inScopeOf: readonly string[] = [],
): Promise<void> {
  await server.sql(
    `INSERT INTO gds.connectors (id, workspace_id, name, type, status, environment_label, warehouse_schema, created_at)
     VALUES ($2, $1, $3, 'postgres', 'INACTIVE', $4, $5, now())
     ON CONFLICT DO NOTHING`,
    [server.ready.workspaceId, `con_${label}_idle`, `warehouse-${label}`, label, `analytics_${label}`],
  );
  for (const email of inScopeOf)
    await server.sql(
      `UPDATE gds.memberships SET env_scope = env_scope || jsonb_build_array($3::text)
        WHERE workspace_id = $1 AND user_id = (SELECT id FROM gds.users WHERE email = $2)
          AND NOT env_scope ? $3`,
      [server.ready.workspaceId, email, label],
    );
}
