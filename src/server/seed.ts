// First-start data: the main workspace, with users of every role plus a platform operator,
// connectors per environment, warehouse schemas with real tables (including a few nulls, a
// duplicated key and malformed e-mails so gate checks can fail for real), and Mode A and Mode B
// tables. A second workspace proves isolation: by default a small one (one owner, one connector);
// with `workspaces: 2` (or more) a full one, whose tables share the main workspace's names, in its own
// warehouse namespace. Runs only when the database holds no workspace yet.
import type { Clock } from './clock.js';
import { isoAt } from './clock.js';
import type { Db, Queryable } from './db/handle.js';
import { recordAudit } from './audit.js';
import { newId } from './ids.js';
import type { Column } from './records/columns.js';
import { appendVersion, fieldsOf, liveContract, updateContract } from './certification/contracts.js';
import { publishCertifiedView } from './certification/view.js';
import { findTable } from './governance/tables.js';
import { describeWarehouseObject, quoteIdent } from './warehouse.js';

interface SeedUser {
  email: string;
  name: string;
  role: 'OWNER' | 'ADMIN' | 'STEWARD' | 'MEMBER';
  envScope: string[];
  operator?: boolean;
}

interface SeedConnector {
  name: string;
  environmentLabel: string;
  schema: string;
  objects: string[];
}

interface SeedModeA {
  name: string;
  connector: string;
  object: string;
  state: string;
  gateMode: 'ENFORCING' | 'ADVISORY';
  owner: string;
}

interface SeedModeB {
  name: string;
  environmentLabel: string;
  state: string;
  gateMode: 'ENFORCING' | 'ADVISORY';
  owner: string;
  columns: Column[];
  rows: Array<Record<string, unknown>>;
  active?: boolean;
}

interface SeedWorkspace {
  name: string;
  /** Starts every warehouse schema of the workspace (connectors' and certified ones); see migration 6. */
  warehousePrefix: string;
  /** Rows of its warehouse objects, where they differ from the main workspace's. */
  warehouseRows?: Record<string, unknown[][]>;
  users: SeedUser[];
  connectors: SeedConnector[];
  modeA: SeedModeA[];
  modeB: SeedModeB[];
}

const ALL_ENVS = ['dev', 'staging', 'production'];

const CONTACT_COLUMNS: Column[] = [
  { name: 'email', type: 'text', required: true },
  { name: 'full_name', type: 'text', required: true },
  { name: 'company', type: 'text', required: false },
  { name: 'phone', type: 'text', required: false },
  { name: 'score', type: 'integer', required: false },
];

const CONTACT_ROWS: Array<Record<string, unknown>> = [
  {
    email: 'ada@example.com',
    full_name: 'Ada Lovelace',
    company: 'Analytical Engines',
    phone: '+44 20 7946 0001',
    score: 91,
  },
  { email: 'alan@example.com', full_name: 'Alan Turing', company: 'Bletchley Park', phone: null, score: 88 },
  {
    email: 'grace@example.com',
    full_name: 'Grace Hopper',
    company: 'US Navy',
    phone: '+1 202 555 0143',
    score: 95,
  },
  {
    email: 'grace@example.com',
    full_name: 'Grace B. Hopper',
    company: 'Remington Rand',
    phone: null,
    score: 70,
  },
  { email: 'edsger[at]example.com', full_name: 'Edsger Dijkstra', company: null, phone: null, score: 83 },
  { email: 'barbara@', full_name: 'Barbara Liskov', company: 'MIT', phone: '+1 617 555 0199', score: null },
  { email: 'donald.example.com', full_name: 'Donald Knuth', company: 'Stanford', phone: null, score: 99 },
  {
    email: 'margaret@example.com',
    full_name: 'Margaret Hamilton',
    company: 'MIT Instrumentation Lab',
    phone: null,
    score: 97,
  },
  {
    email: 'ken@example.com',
    full_name: 'Ken Thompson',
    company: 'Bell Labs',
    phone: '+1 908 555 0100',
    score: 90,
  },
  {
    email: 'dennis@example.com',
    full_name: 'Dennis Ritchie',
    company: 'Bell Labs',
    phone: null,
    score: null,
  },
  { email: 'frances@example.com', full_name: 'Frances Allen', company: 'IBM', phone: null, score: 86 },
  {
    email: 'john@example.com',
    full_name: 'John Backus',
    company: 'IBM',
    phone: '+1 914 555 0123',
    score: 84,
  },
];

// The other workspaces' warehouse: the same objects over other rows, clean enough to certify.
const SECOND_WAREHOUSE_ROWS: Record<string, unknown[][]> = {
  customers: [
    ['g01', 2001, 'hank@globex.example', 'Hank Scorpio', 'US', '2024-01-20', 5000],
    ['g02', 2002, 'homer@globex.example', 'Homer Simpson', 'US', '2024-02-14', 120.5],
    ['g03', 2003, 'mindy@globex.example', 'Mindy Simmons', 'US', '2024-03-09', 880],
  ],
  orders: [
    ['go1', 7001, 2001, 990, 'SHIPPED', '2024-09-01'],
    ['go2', 7002, 2002, 12.5, 'PENDING', '2024-09-02'],
    ['go3', 7003, 2003, 310, 'SHIPPED', '2024-09-03'],
  ],
};

const MAIN_WORKSPACE: SeedWorkspace = {
  name: 'Northwind Analytics',
  warehousePrefix: '',
  users: [
    { email: 'owner@example.com', name: 'Olivia Owner', role: 'OWNER', envScope: ALL_ENVS },
    { email: 'admin@example.com', name: 'Adam Admin', role: 'ADMIN', envScope: ALL_ENVS },
    { email: 'steward@example.com', name: 'Stella Steward', role: 'STEWARD', envScope: ['dev', 'staging'] },
    { email: 'member@example.com', name: 'Max Member', role: 'MEMBER', envScope: ['dev'] },
    {
      email: 'operator@example.com',
      name: 'Pat Operator',
      role: 'ADMIN',
      envScope: ALL_ENVS,
      operator: true,
    },
  ],
  connectors: [
    {
      name: 'warehouse-dev',
      environmentLabel: 'dev',
      schema: 'analytics_dev',
      // categorydim, productsdim and stg_pipedrive__stages are models of the dbt fixtures (recertify).
      objects: ['customers', 'orders', 'products', 'categorydim', 'productsdim', 'stg_pipedrive__stages'],
    },
    {
      name: 'warehouse-staging',
      environmentLabel: 'staging',
      schema: 'analytics_staging',
      objects: ['customers', 'orders'],
    },
    {
      name: 'warehouse-production',
      environmentLabel: 'production',
      schema: 'analytics_prod',
      objects: ['customers', 'orders'],
    },
  ],
  modeA: [
    {
      name: 'customers',
      connector: 'warehouse-dev',
      object: 'customers',
      state: 'CERTIFIED',
      gateMode: 'ENFORCING',
      owner: 'steward@example.com',
    },
    {
      name: 'orders',
      connector: 'warehouse-dev',
      object: 'orders',
      state: 'QUARANTINED',
      gateMode: 'ADVISORY',
      owner: 'member@example.com',
    },
    {
      name: 'customers_production',
      connector: 'warehouse-production',
      object: 'customers',
      state: 'CERTIFIED',
      gateMode: 'ENFORCING',
      owner: 'owner@example.com',
    },
  ],
  modeB: [
    {
      name: 'crm_contacts',
      environmentLabel: 'dev',
      state: 'CERTIFIED',
      gateMode: 'ADVISORY',
      owner: 'admin@example.com',
      columns: CONTACT_COLUMNS,
      rows: CONTACT_ROWS,
    },
    {
      name: 'legacy_leads',
      environmentLabel: 'dev',
      state: 'QUARANTINED',
      gateMode: 'ADVISORY',
      owner: 'admin@example.com',
      columns: CONTACT_COLUMNS,
      rows: CONTACT_ROWS.slice(0, 2),
      active: false,
    },
  ],
};

/** The small second workspace seeded by default: one owner, one connector. */
const SMALL_SECOND_WORKSPACE: SeedWorkspace = {
  name: 'Globex Data',
  warehousePrefix: 'globex_',
  users: [{ email: 'owner@globex.example', name: 'Gina Globex', role: 'OWNER', envScope: ALL_ENVS }],
  connectors: [{ name: 'globex-dev', environmentLabel: 'dev', schema: 'globex_dev', objects: ['customers'] }],
  modeA: [
    {
      name: 'globex_customers',
      connector: 'globex-dev',
      object: 'customers',
      state: 'CERTIFIED',
      gateMode: 'ENFORCING',
      owner: 'owner@globex.example',
    },
  ],
  modeB: [
    {
      name: 'globex_contacts',
      environmentLabel: 'dev',
      state: 'CERTIFIED',
      gateMode: 'ADVISORY',
      owner: 'owner@globex.example',
      columns: CONTACT_COLUMNS,
      rows: CONTACT_ROWS.slice(0, 4),
    },
  ],
};

/**
 * A full workspace beside the main one: every role, a connector per environment, and tables named as the
 * main workspace's (`customers`, `orders`, `customers_production`, `crm_contacts`) over its own rows.
 */
function fullWorkspace(name: string, key: string, owner: string): SeedWorkspace {
  const email = (local: string) => `${local}@${key}.example`;
  const connector = (env: string, schema: string): SeedConnector => ({
    name: `${key}-${env}`,
    environmentLabel: env,
    schema: `${key}_${schema}`,
    objects: ['customers', 'orders'],
  });
  return {
    name,
    warehousePrefix: `${key}_`,
    warehouseRows: SECOND_WAREHOUSE_ROWS,
    users: [
      { email: email('owner'), name: owner, role: 'OWNER', envScope: ALL_ENVS },
      { email: email('admin'), name: `${name} Admin`, role: 'ADMIN', envScope: ALL_ENVS },
      { email: email('steward'), name: `${name} Steward`, role: 'STEWARD', envScope: ['dev', 'staging'] },
      { email: email('member'), name: `${name} Member`, role: 'MEMBER', envScope: ['dev'] },
    ],
    connectors: [connector('dev', 'dev'), connector('staging', 'staging'), connector('production', 'prod')],
    modeA: [
      {
        name: 'customers',
        connector: `${key}-dev`,
        object: 'customers',
        state: 'CERTIFIED',
        gateMode: 'ENFORCING',
        owner: email('steward'),
      },
      {
        name: 'orders',
        connector: `${key}-dev`,
        object: 'orders',
        state: 'QUARANTINED',
        gateMode: 'ADVISORY',
        owner: email('member'),
      },
      {
        name: 'customers_production',
        connector: `${key}-production`,
        object: 'customers',
        state: 'CERTIFIED',
        gateMode: 'ENFORCING',
        owner: email('owner'),
      },
    ],
    modeB: [
      {
        name: 'crm_contacts',
        environmentLabel: 'dev',
        state: 'CERTIFIED',
        gateMode: 'ADVISORY',
        owner: email('admin'),
        columns: CONTACT_COLUMNS,
        rows: CONTACT_ROWS.slice(0, 4),
      },
    ],
  };
}

/** The workspaces to seed: the main one, then a small second one, or `count - 1` full ones. */
export function seedWorkspaces(count: number): SeedWorkspace[] {
  if (count <= 1) return [MAIN_WORKSPACE, SMALL_SECOND_WORKSPACE];
  const others = Array.from({ length: count - 1 }, (_, i) =>
    i === 0
      ? fullWorkspace('Globex Data', 'globex', 'Gina Globex')
      : fullWorkspace(`Workspace ${i + 2}`, `ws${i + 2}`, `Owner ${i + 2}`),
  );
  return [MAIN_WORKSPACE, ...others];
}

const WAREHOUSE_DDL: Record<string, string> = {
  customers: `(id text PRIMARY KEY, customer_id integer, email text, full_name text, country text,
    signup_date date, lifetime_value numeric(12,2))`,
  orders: `(id text PRIMARY KEY, order_id integer, customer_id integer, amount numeric(12,2), status text,
    ordered_on date)`,
  products: `(id text PRIMARY KEY, sku text, name text, price numeric(10,2))`,
  categorydim: `(category_id integer PRIMARY KEY, category_name text)`,
  productsdim: `(product_id integer PRIMARY KEY, product_name text, category_id integer, price numeric(10,2))`,
  stg_pipedrive__stages: `(stage_id integer PRIMARY KEY, stage_name text, pipeline_id integer)`,
};

// Nulls, a duplicated customer_id (1004), malformed e-mails, an orphan order and a negative amount.
const WAREHOUSE_ROWS: Record<string, unknown[][]> = {
  customers: [
    ['c01', 1001, 'ada@example.com', 'Ada Lovelace', 'GB', '2024-01-15', 1200.5],
    ['c02', 1002, 'alan@example.com', 'Alan Turing', 'GB', '2024-02-01', 830],
    ['c03', 1003, 'grace@example.com', 'Grace Hopper', 'US', '2024-02-11', 2210.75],
    ['c04', 1004, 'edsger[at]example.com', 'Edsger Dijkstra', 'NL', '2024-03-03', 410],
    ['c05', 1004, 'edsger.d@example.com', 'E. W. Dijkstra', 'NL', '2024-03-04', 15],
    ['c06', 1006, 'barbara@', 'Barbara Liskov', null, '2024-04-20', null],
    ['c07', 1007, null, 'Donald Knuth', 'US', '2024-05-02', 990],
    ['c08', 1008, 'margaret@example.com', 'Margaret Hamilton', 'US', null, 3100],
    ['c09', 1009, 'ken.example.com', 'Ken Thompson', 'US', '2024-06-30', 640.2],
    ['c10', 1010, 'frances@example.com', 'Frances Allen', null, '2024-07-07', 720],
  ],
  orders: [
    ['o01', 5001, 1001, 120.5, 'SHIPPED', '2024-08-01'],
    ['o02', 5002, 1002, 80, 'SHIPPED', '2024-08-02'],
    ['o03', 5003, 1003, 310, 'PENDING', '2024-08-03'],
    ['o04', 5004, 9999, 42, 'SHIPPED', '2024-08-04'],
    ['o05', 5005, 1004, -5, 'REFUNDED', '2024-08-05'],
    ['o06', 5006, 1006, 55.25, null, '2024-08-06'],
    ['o07', 5007, null, 19.99, 'PENDING', null],
    ['o08', 5008, 1008, 240, 'SHIPPED', '2024-08-08'],
  ],
  products: [
    ['p01', 'SKU-001', 'Widget', 9.99],
    ['p02', 'SKU-002', 'Gadget', 24.5],
    ['p03', 'SKU-003', null, 3.25],
  ],
  categorydim: [
    [1, 'Electronics'],
    [2, 'Books'],
    [3, null],
  ],
  productsdim: [
    [10, 'Laptop', 1, 999.9],
    [11, 'Novel', 2, 12.5],
    [12, 'Cable', 1, null],
    [13, 'Atlas', 2, 40],
  ],
  stg_pipedrive__stages: [
    [1, 'Qualified', 1],
    [2, 'Contact made', 1],
  ],
};

/** Seeds everything unless a workspace already exists (a persistent data dir or database). */
export async function seedIfEmpty(db: Db, clock: Clock, workspaces = 1): Promise<void> {
  const [existing] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM gds.workspaces');
  if ((existing?.n ?? 0) > 0) return;
  await db.transaction(async (tx) => {
    for (const [index, workspace] of seedWorkspaces(workspaces).entries())
      await seedWorkspace(tx, clock, workspace, index);
  });
}

async function seedWorkspace(tx: Queryable, clock: Clock, seed: SeedWorkspace, order: number): Promise<void> {
  // Workspaces are told apart by creation order: the first is the ready file's main workspace.
  const createdAt = new Date(clock() + order).toISOString();
  const workspaceId = newId('ws');
  await tx.query(
    'INSERT INTO gds.workspaces (id, name, created_at, warehouse_prefix) VALUES ($1, $2, $3, $4)',
    [workspaceId, seed.name, createdAt, seed.warehousePrefix],
  );
  const userIds = new Map<string, string>();
  for (const user of seed.users) {
    const userId = newId('usr');
    userIds.set(user.email, userId);
    await tx.query(
      `INSERT INTO gds.users (id, email, display_name, platform_operator, created_at) VALUES ($1, $2, $3, $4, $5)`,
      [userId, user.email, user.name, user.operator ?? false, createdAt],
    );
    await tx.query(
      `INSERT INTO gds.memberships (workspace_id, user_id, role, env_scope) VALUES ($1, $2, $3, $4)`,
      [workspaceId, userId, user.role, JSON.stringify(user.envScope)],
    );
  }
  const connectors = new Map<string, { id: string; schema: string; env: string }>();
  for (const [index, connector] of seed.connectors.entries()) {
    const id = newId('con');
    connectors.set(connector.name, { id, schema: connector.schema, env: connector.environmentLabel });
    await tx.query(
      `INSERT INTO gds.connectors (id, workspace_id, name, type, status, environment_label, warehouse_schema, created_at)
       VALUES ($1, $2, $3, 'postgres', 'ACTIVE', $4, $5, $6)`,
      // Listed in seed order (dev, staging, production): one millisecond apart.
      [
        id,
        workspaceId,
        connector.name,
        connector.environmentLabel,
        connector.schema,
        new Date(Date.parse(createdAt) + index),
      ],
    );
    await createWarehouseSchema(tx, connector, seed.warehouseRows ?? WAREHOUSE_ROWS);
  }
  const owner = (email: string) => userIds.get(email) ?? fail(`seed: unknown user ${email}`);
  for (const table of seed.modeA) {
    const connector = connectors.get(table.connector) ?? fail(`seed: unknown connector ${table.connector}`);
    const source = `${connector.schema}.${table.object}`;
    const columns =
      (await describeWarehouseObject(tx, source)) ?? fail(`seed: no warehouse object ${source}`);
    const tableId = await insertTable(tx, {
      workspaceId,
      name: table.name,
      mode: 'MODE_A',
      state: table.state,
      gateMode: table.gateMode,
      env: connector.env,
      connectorId: connector.id,
      source,
      ownerId: owner(table.owner),
      columns,
      active: true,
      createdAt,
    });
    await auditSeededTable(tx, clock, workspaceId, owner(table.owner), tableId, table, connector.env);
  }
  for (const table of seed.modeB) {
    const tableId = await insertTable(tx, {
      workspaceId,
      name: table.name,
      mode: 'MODE_B',
      state: table.state,
      gateMode: table.gateMode,
      env: table.environmentLabel,
      connectorId: null,
      source: null,
      ownerId: owner(table.owner),
      columns: table.columns,
      active: table.active ?? true,
      createdAt,
    });
    for (const row of table.rows) {
      await tx.query(
        `INSERT INTO gds.records (table_id, id, data, created_at, updated_at) VALUES ($1, $2, $3, $4, $4)`,
        [tableId, newId('rec'), JSON.stringify(row), createdAt],
      );
    }
    await auditSeededTable(
      tx,
      clock,
      workspaceId,
      owner(table.owner),
      tableId,
      table,
      table.environmentLabel,
    );
  }
}

interface TableRow {
  workspaceId: string;
  name: string;
  mode: 'MODE_A' | 'MODE_B';
  state: string;
  gateMode: string;
  env: string;
  connectorId: string | null;
  source: string | null;
  ownerId: string;
  columns: Column[];
  active: boolean;
  createdAt: string;
}

async function insertTable(tx: Queryable, t: TableRow): Promise<string> {
  const id = newId('tbl');
  await tx.query(
    `INSERT INTO gds.tables (id, workspace_id, slug, name, mode, state, gate_mode, environment_label,
       connector_id, source, owner_id, columns, active, created_at, updated_at, governance_id)
     VALUES ($1, $2, $3, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13, $1)`,
    [
      id,
      t.workspaceId,
      t.name,
      t.mode,
      t.state,
      t.gateMode,
      t.env,
      t.connectorId,
      t.source,
      t.ownerId,
      JSON.stringify(t.columns),
      t.active,
      t.createdAt,
    ],
  );
  return id;
}

async function auditSeededTable(
  tx: Queryable,
  clock: Clock,
  workspaceId: string,
  userId: string,
  tableId: string,
  table: { name: string; state: string; gateMode: 'ENFORCING' | 'ADVISORY' },
  environmentLabel: string,
): Promise<void> {
  const base = { workspaceId, userId, tableId, environmentLabel, gateMode: table.gateMode };
  await recordAudit(tx, clock, {
    ...base,
    action: 'TABLE_REGISTERED',
    resource: 'table',
    details: { seeded: true },
  });
  if (table.state === 'CERTIFIED') {
    await recordAudit(tx, clock, {
      ...base,
      action: 'TABLE_CERTIFIED',
      resource: 'semantic_contract',
      details: { note: `Seeded as certified at ${isoAt(clock)}` },
    });
    await certifySeededTable(tx, clock, workspaceId, userId, tableId);
  }
}

/** What certification leaves behind, as for any certified table: version 1 of the contract and the view. */
async function certifySeededTable(
  tx: Queryable,
  clock: Clock,
  workspaceId: string,
  userId: string,
  tableId: string,
): Promise<void> {
  const table = await findTable(tx, workspaceId, tableId);
  if (!table) throw new Error(`seeded table ${tableId} vanished`);
  const at = isoAt(clock);
  const contract = await liveContract(tx, clock, table);
  await appendVersion(tx, {
    tableId,
    kind: 'CERTIFICATION',
    environmentLabel: table.environmentLabel,
    contract,
    at,
    by: userId,
  });
  await updateContract(tx, clock, tableId, fieldsOf(contract), userId, at);
  await publishCertifiedView(tx, table);
}

/** Creates the connector's warehouse schema and sample tables, leaving existing objects untouched. */
async function createWarehouseSchema(
  tx: Queryable,
  connector: SeedConnector,
  warehouseRows: Record<string, unknown[][]>,
): Promise<void> {
  await tx.exec(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(connector.schema)}`);
  for (const object of connector.objects) {
    const source = `${connector.schema}.${object}`;
    if (await describeWarehouseObject(tx, source)) continue;
    const ddl = WAREHOUSE_DDL[object] ?? fail(`seed: no DDL for ${object}`);
    const rows = warehouseRows[object] ?? [];
    const target = `${quoteIdent(connector.schema)}.${quoteIdent(object)}`;
    await tx.exec(`CREATE TABLE ${target} ${ddl}`);
    for (const row of rows) {
      const placeholders = row.map((_, i) => `$${i + 1}`).join(', ');
      await tx.query(`INSERT INTO ${target} VALUES (${placeholders})`, row);
    }
  }
}

function fail(message: string): never {
  throw new Error(message);
}
