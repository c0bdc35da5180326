// The ready file: what tests and scripts need to talk to a running server (base URL, ready-made
// tokens per role, connectors, tables, warehouse objects). Written only once the server listens.
import { seededCliToken } from './auth/cli-tokens.js';
import type { Role } from '../core/scopes.js';
import type { AppContext } from './context.js';
import type { DbtWarehouse } from './dbt-warehouse.js';
import type { Doors } from './doors.js';
import { doorsOf } from './doors.js';
import type { WarehouseObject } from './warehouse.js';
import { listWarehouseObjects } from './warehouse.js';

export interface ReadyUser {
  userId: string;
  /** The workspace this user's tokens act in (a session or CLI token reaches no other). */
  workspaceId: string;
  email: string;
  /** The workspace role; a platform operator (never in member lists) shows as PLATFORM_OPERATOR. */
  role: Role | 'PLATFORM_OPERATOR';
  /** A session JWT (audience `session`), valid 60 minutes from start. */
  accessToken: string;
  /** A static CLI token (`cli_…`), valid until revoked; the same at every start over one database. */
  cliToken: string;
}

export interface ReadyConnector {
  id: string;
  name: string;
  type: string;
  status: string;
  environmentLabel: string;
  /** The warehouse schema this connector points at. */
  schema: string;
}

export interface ReadyTable {
  id: string;
  name: string;
  slug: string;
  mode: 'MODE_A' | 'MODE_B';
  state: string;
  gateMode: 'ENFORCING' | 'ADVISORY';
  environmentLabel: string;
  connectorId: string | null;
  /** `schema.table` of the warehouse object (Mode A). */
  source: string | null;
  ownerId: string;
  /** Inactive tables answer 404 on every endpoint. */
  active: boolean;
}

export interface ReadyWorkspace {
  workspaceId: string;
  name: string;
  /**
   * Starts the names of the workspace's warehouse schemas: its certified views are in
   * `<warehousePrefix>certified_<env>`. Empty for the first workspace.
   */
  warehousePrefix: string;
  users: ReadyUser[];
  connectors: ReadyConnector[];
  tables: ReadyTable[];
  warehouseObjects: WarehouseObject[];
}

/** The first workspace's fields at the top level (what most tests and the demo use), then every workspace. */
export interface ReadyInfo extends ReadyWorkspace {
  /** The REST door's base URL, `{origin}/{stage}` (its paths begin with `/api`): what gds's --base takes. */
  baseUrl: string;
  /** The listening origin: the device page (`/device`) and the dashboard (`/dashboard`) are under it. */
  origin: string;
  /** Each door's base URL: REST (the same as `baseUrl`), GraphQL and MCP (no stage segment). */
  doors: Doors;
  /** The dashboard's home page. */
  dashboardUrl: string;
  /** The second workspace (`workspaces[1]`), to prove isolation. */
  otherWorkspace: ReadyWorkspace;
  /** Every workspace, oldest first: the first is the top level's, the second `otherWorkspace`. */
  workspaces: ReadyWorkspace[];
  /** `--dbt DIR`: the project's relations created in the first workspace's warehouse, and those refused. */
  dbt?: DbtWarehouse;
}

export async function buildReadyInfo(ctx: AppContext, dbt?: DbtWarehouse): Promise<ReadyInfo> {
  const rows = await ctx.db.query<{ id: string; name: string; warehouse_prefix: string }>(
    'SELECT id, name, warehouse_prefix FROM gds.workspaces ORDER BY created_at, id',
  );
  const workspaces = await Promise.all(rows.map((w) => describeWorkspace(ctx, w)));
  const [main, other] = workspaces;
  if (!main || !other) throw new Error('the database holds fewer than two workspaces');
  return {
    baseUrl: ctx.restBaseUrl(),
    origin: ctx.baseUrl(),
    doors: doorsOf(ctx),
    dashboardUrl: `${ctx.baseUrl()}/dashboard`,
    ...main,
    otherWorkspace: other,
    workspaces,
    ...(dbt ? { dbt } : {}),
  };
}

async function describeWorkspace(
  ctx: AppContext,
  workspace: { id: string; name: string; warehouse_prefix: string },
): Promise<ReadyWorkspace> {
  const members = await ctx.db.query<{ id: string; email: string; role: Role; platform_operator: boolean }>(
    `SELECT u.id, u.email, m.role, u.platform_operator FROM gds.memberships m JOIN gds.users u ON u.id = m.user_id
      WHERE m.workspace_id = $1 AND m.active
      ORDER BY u.platform_operator, CASE m.role WHEN 'OWNER' THEN 1 WHEN 'ADMIN' THEN 2 WHEN 'STEWARD' THEN 3 ELSE 4 END`,
    [workspace.id],
  );
  const users: ReadyUser[] = [];
  for (const member of members) {
    const session = await ctx.signer.sign({
      audience: 'session',
      userId: member.id,
      workspaceId: workspace.id,
    });
    users.push({
      userId: member.id,
      workspaceId: workspace.id,
      email: member.email,
      role: member.platform_operator ? 'PLATFORM_OPERATOR' : member.role,
      accessToken: session.token,
      cliToken: await seededCliToken(ctx, { workspaceId: workspace.id, userId: member.id }),
    });
  }
  const connectors = await ctx.db.query<ReadyConnector>(
    `SELECT id, name, type, status, environment_label AS "environmentLabel", warehouse_schema AS schema
       FROM gds.connectors WHERE workspace_id = $1 ORDER BY created_at, name`,
    [workspace.id],
  );
  const tables = await ctx.db.query<ReadyTable>(
    `SELECT id, name, slug, mode, state, gate_mode AS "gateMode", environment_label AS "environmentLabel",
            connector_id AS "connectorId", source, owner_id AS "ownerId", active
       FROM gds.tables WHERE workspace_id = $1 ORDER BY created_at, name`,
    [workspace.id],
  );
  const warehouseObjects = await listWarehouseObjects(
    ctx.db,
    connectors.map((c) => ({ id: c.id, schema: c.schema })),
  );
  return {
    workspaceId: workspace.id,
    name: workspace.name,
    warehousePrefix: workspace.warehouse_prefix,
    users,
    connectors,
    tables,
    warehouseObjects,
  };
}
