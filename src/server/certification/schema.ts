// Migration 4: the live semantic contract per table, its immutable numbered versions, and the
// workspace configuration with the history of every change.
import type { Migration } from '../db/migration.js';

export const CERTIFICATION_MIGRATION: Migration = {
  version: 4,
  name: 'semantic contracts, contract versions, workspace config and its history',
  sql: `
    CREATE TABLE gds.contracts (
      table_id text PRIMARY KEY REFERENCES gds.tables(id),
      id text NOT NULL UNIQUE,
      intent text CHECK (intent IN ('METRIC', 'DECISION', 'OPERATIONAL', 'EXPLORATORY')),
      allowed_consumers jsonb NOT NULL DEFAULT '[]',
      grain text NOT NULL DEFAULT '',
      grain_type text,
      grain_key_columns jsonb NOT NULL DEFAULT '[]',
      meaning text NOT NULL DEFAULT '',
      certified_at timestamptz,
      updated_at timestamptz NOT NULL,
      updated_by text REFERENCES gds.users(id)
    );
    CREATE TABLE gds.contract_versions (
      table_id text NOT NULL REFERENCES gds.tables(id),
      version integer NOT NULL,
      kind text NOT NULL CHECK (kind IN ('CERTIFICATION', 'RESTORE')),
      environment_label text NOT NULL,
      contract jsonb NOT NULL,
      certified_at timestamptz NOT NULL,
      certified_by text NOT NULL REFERENCES gds.users(id),
      restored_from integer,
      reason text,
      PRIMARY KEY (table_id, version)
    );
    -- History is never rewritten: a restore cuts a new version, nothing updates or deletes one.
    CREATE FUNCTION gds.contract_versions_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'contract versions are immutable';
    END;
    $$;
    CREATE TRIGGER contract_versions_immutable BEFORE UPDATE OR DELETE ON gds.contract_versions
      FOR EACH ROW EXECUTE FUNCTION gds.contract_versions_immutable();
    CREATE TABLE gds.workspace_config (
      workspace_id text NOT NULL REFERENCES gds.workspaces(id),
      key text NOT NULL,
      value text NOT NULL,
      updated_at timestamptz NOT NULL,
      updated_by text NOT NULL REFERENCES gds.users(id),
      PRIMARY KEY (workspace_id, key)
    );
    CREATE TABLE gds.workspace_config_history (
      seq bigserial PRIMARY KEY,
      workspace_id text NOT NULL REFERENCES gds.workspaces(id),
      key text NOT NULL,
      old_value text NOT NULL,
      new_value text NOT NULL,
      changed_by text NOT NULL REFERENCES gds.users(id),
      changed_at timestamptz NOT NULL
    );
    CREATE INDEX workspace_config_history_by_key ON gds.workspace_config_history (workspace_id, key, seq);
  `,
};

// Migration 6: each workspace's warehouse namespace. Its certified projections live in
// `<prefix>certified_<env>`, so one workspace never publishes over another's view; the oldest workspace
// keeps the bare names (`certified_dev`), each later one gets a prefix of its own.
export const WAREHOUSE_NAMESPACE_MIGRATION: Migration = {
  version: 6,
  name: 'per-workspace warehouse namespace (certified schema prefix)',
  sql: `
    ALTER TABLE gds.workspaces ADD COLUMN warehouse_prefix text NOT NULL DEFAULT ''
      CHECK (warehouse_prefix ~ '^([a-z][a-z0-9]*_)?$');
    UPDATE gds.workspaces w SET warehouse_prefix = 'ws' || ranked.n || '_'
      FROM (SELECT id, row_number() OVER (ORDER BY created_at, id) AS n FROM gds.workspaces) ranked
     WHERE ranked.id = w.id AND ranked.n > 1;
    CREATE UNIQUE INDEX workspaces_warehouse_prefix ON gds.workspaces (warehouse_prefix);
  `,
};
