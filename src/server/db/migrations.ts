// The service's own schema (`gds`), as an ordered list of migrations applied once each. Later
// issues append migrations here; never edit one that has shipped.
import type { Db } from './index.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'identity, tables, records, tokens, audit log',
    sql: `
      CREATE TABLE gds.workspaces (
        id text PRIMARY KEY,
        name text NOT NULL,
        created_at timestamptz NOT NULL
      );
      CREATE TABLE gds.users (
        id text PRIMARY KEY,
        email text NOT NULL UNIQUE,
        display_name text NOT NULL,
        platform_operator boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL
      );
      CREATE TABLE gds.memberships (
        workspace_id text NOT NULL REFERENCES gds.workspaces(id),
        user_id text NOT NULL REFERENCES gds.users(id),
        role text NOT NULL CHECK (role IN ('OWNER', 'ADMIN', 'STEWARD', 'MEMBER')),
        env_scope jsonb NOT NULL,
        active boolean NOT NULL DEFAULT true,
        PRIMARY KEY (workspace_id, user_id)
      );
      CREATE TABLE gds.connectors (
        id text PRIMARY KEY,
        workspace_id text NOT NULL REFERENCES gds.workspaces(id),
        name text NOT NULL,
        type text NOT NULL,
        status text NOT NULL,
        environment_label text NOT NULL,
        warehouse_schema text NOT NULL,
        created_at timestamptz NOT NULL
      );
      CREATE TABLE gds.tables (
        id text PRIMARY KEY,
        workspace_id text NOT NULL REFERENCES gds.workspaces(id),
        slug text NOT NULL,
        name text NOT NULL,
        mode text NOT NULL CHECK (mode IN ('MODE_A', 'MODE_B')),
        state text NOT NULL,
        gate_mode text NOT NULL CHECK (gate_mode IN ('ENFORCING', 'ADVISORY')),
        environment_label text NOT NULL,
        connector_id text REFERENCES gds.connectors(id),
        source text,
        owner_id text NOT NULL REFERENCES gds.users(id),
        columns jsonb NOT NULL,
        active boolean NOT NULL DEFAULT true,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL
      );
      CREATE UNIQUE INDEX tables_active_slug ON gds.tables (workspace_id, slug) WHERE active;
      CREATE TABLE gds.records (
        table_id text NOT NULL REFERENCES gds.tables(id),
        id text NOT NULL,
        seq bigserial,
        data jsonb NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        PRIMARY KEY (table_id, id)
      );
      CREATE INDEX records_by_seq ON gds.records (table_id, seq);
      CREATE TABLE gds.cli_tokens (
        id text PRIMARY KEY,
        workspace_id text NOT NULL REFERENCES gds.workspaces(id),
        user_id text NOT NULL REFERENCES gds.users(id),
        token_hash text NOT NULL UNIQUE,
        created_at timestamptz NOT NULL,
        revoked_at timestamptz
      );
      CREATE TABLE gds.integration_tokens (
        id text PRIMARY KEY,
        workspace_id text NOT NULL REFERENCES gds.workspaces(id),
        user_id text NOT NULL REFERENCES gds.users(id),
        name text NOT NULL,
        audience text NOT NULL CHECK (audience IN ('DATA-API', 'MANAGEMENT')),
        env text NOT NULL,
        scopes jsonb NOT NULL,
        client_token_hash text NOT NULL UNIQUE,
        created_at timestamptz NOT NULL,
        revoked_at timestamptz
      );
      CREATE TABLE gds.refresh_tokens (
        id text PRIMARY KEY,
        family_id text NOT NULL REFERENCES gds.integration_tokens(id),
        secret_hash text NOT NULL,
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL,
        used_at timestamptz
      );
      CREATE TABLE gds.audit_log (
        seq bigserial PRIMARY KEY,
        id text NOT NULL UNIQUE,
        workspace_id text NOT NULL REFERENCES gds.workspaces(id),
        user_id text,
        table_id text,
        action text NOT NULL,
        resource text NOT NULL,
        environment_label text,
        gate_mode text,
        details jsonb,
        created_at timestamptz NOT NULL
      );
      CREATE INDEX audit_log_by_workspace ON gds.audit_log (workspace_id, seq DESC);
      CREATE TABLE gds.signing_keys (
        kid text PRIMARY KEY,
        alg text NOT NULL,
        private_jwk jsonb NOT NULL,
        public_jwk jsonb NOT NULL,
        created_at timestamptz NOT NULL
      );
    `,
  },
  {
    version: 5,
    name: 'device authorization codes, session refresh tokens',
    sql: `
      CREATE TABLE gds.device_codes (
        device_code_hash text PRIMARY KEY,
        user_code text NOT NULL UNIQUE,
        client_id text NOT NULL,
        scope text NOT NULL,
        status text NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'consumed')),
        user_id text REFERENCES gds.users(id),
        workspace_id text REFERENCES gds.workspaces(id),
        interval_seconds integer NOT NULL,
        last_polled_at timestamptz,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL
      );
      CREATE TABLE gds.session_refresh_tokens (
        id text PRIMARY KEY,
        family_id text NOT NULL,
        token_hash text NOT NULL UNIQUE,
        client_id text NOT NULL,
        scope text NOT NULL,
        user_id text NOT NULL REFERENCES gds.users(id),
        workspace_id text NOT NULL REFERENCES gds.workspaces(id),
        used_at timestamptz,
        revoked_at timestamptz,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL
      );
      CREATE INDEX session_refresh_tokens_by_family ON gds.session_refresh_tokens (family_id);
    `,
  },
];

/** Applies every migration not yet applied, each in its own transaction. */
export async function migrate(db: Db): Promise<void> {
  await db.exec(`
    CREATE SCHEMA IF NOT EXISTS gds;
    CREATE TABLE IF NOT EXISTS gds.schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    );
  `);
  const applied = new Set(
    (await db.query<{ version: number }>('SELECT version FROM gds.schema_migrations')).map((r) => r.version),
  );
  for (const migration of MIGRATIONS) {
    if (applied.has(migration.version)) continue;
    await db.transaction(async (tx) => {
      await tx.exec(migration.sql);
      await tx.query('INSERT INTO gds.schema_migrations (version, name) VALUES ($1, $2)', [
        migration.version,
        migration.name,
      ]);
    });
  }
}
