// The service's own schema (`gds`), as an ordered list of migrations applied once each. Later
// issues append migrations here; never edit one that has shipped.
import { CERTIFICATION_MIGRATION, WAREHOUSE_NAMESPACE_MIGRATION } from '../certification/schema.js';
import type { Db } from './handle.js';
import type { Migration } from './migration.js';

/**
 * Binds the grants of DATA-API tokens issued before table ids were recorded: each `tables:<slug>:…` scope
 * to the table of that slug in the token's workspace that existed when the token was issued (the newest
 * such), so upgraded tokens keep reading their table and never a later table reusing the slug.
 */
export const BIND_EXISTING_GRANTS = `
  UPDATE gds.integration_tokens it SET table_ids = COALESCE((
    SELECT jsonb_object_agg(bound.slug, bound.id) FROM (
      SELECT DISTINCT ON (granted.slug) granted.slug, t.id
        FROM (SELECT DISTINCT split_part(scope, ':', 2) AS slug
                FROM jsonb_array_elements_text(it.scopes) AS scope
               WHERE scope LIKE 'tables:%') granted
        JOIN gds.tables t
          ON t.workspace_id = it.workspace_id AND t.slug = granted.slug AND t.created_at <= it.created_at
       ORDER BY granted.slug, t.created_at DESC
    ) bound), '{}'::jsonb)
   WHERE it.audience = 'DATA-API' AND it.table_ids = '{}'::jsonb;
`;

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
    version: 2,
    name: 'governance: table versions, jobs, recertification requests, notifications',
    sql: `
      ALTER TABLE gds.tables
        ADD COLUMN definition_version integer NOT NULL DEFAULT 1,
        ADD COLUMN gate1_version integer NOT NULL DEFAULT 0,
        ADD COLUMN data_version integer NOT NULL DEFAULT 0,
        ADD COLUMN governance_id text,
        ADD COLUMN grain text,
        ADD COLUMN grain_key_columns jsonb,
        ADD COLUMN deleted_at timestamptz,
        ADD COLUMN artifact jsonb,
        ADD COLUMN definition_checksum text;
      UPDATE gds.tables SET governance_id = id WHERE governance_id IS NULL;
      CREATE TABLE gds.jobs (
        id text PRIMARY KEY,
        workspace_id text NOT NULL REFERENCES gds.workspaces(id),
        table_id text REFERENCES gds.tables(id),
        type text NOT NULL,
        status text NOT NULL CHECK (status IN ('QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED')),
        params jsonb NOT NULL DEFAULT '{}',
        created_by text NOT NULL,
        created_at timestamptz NOT NULL,
        started_at timestamptz,
        finished_at timestamptz,
        result jsonb,
        error jsonb
      );
      CREATE INDEX jobs_queued ON gds.jobs (created_at, id) WHERE status = 'QUEUED';
      CREATE INDEX jobs_by_table ON gds.jobs (table_id, created_at);
      CREATE TABLE gds.recertification_requests (
        id text PRIMARY KEY,
        workspace_id text NOT NULL REFERENCES gds.workspaces(id),
        table_id text NOT NULL REFERENCES gds.tables(id),
        cause text NOT NULL CHECK (cause IN ('drift', 'schema_change', 'ingest', 'manual')),
        status text NOT NULL CHECK (status IN ('OPEN', 'DISMISSED', 'RESOLVED')),
        details jsonb,
        created_by text,
        created_at timestamptz NOT NULL,
        dismissed_by text,
        dismissed_at timestamptz
      );
      CREATE INDEX recertification_open ON gds.recertification_requests (workspace_id, created_at)
        WHERE status = 'OPEN';
      CREATE TABLE gds.notifications (
        id text PRIMARY KEY,
        workspace_id text NOT NULL REFERENCES gds.workspaces(id),
        table_id text REFERENCES gds.tables(id),
        recipient_role text NOT NULL,
        kind text NOT NULL,
        message text NOT NULL,
        details jsonb,
        created_at timestamptz NOT NULL,
        read_at timestamptz
      );
    `,
  },
  {
    version: 3,
    name: 'gates: gate1.yml versions and persisted gate proofs',
    sql: `
      CREATE TABLE gds.gate1_versions (
        table_id text NOT NULL REFERENCES gds.tables(id),
        version integer NOT NULL,
        content text NOT NULL,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL,
        PRIMARY KEY (table_id, version)
      );
      CREATE TABLE gds.gate_proofs (
        id text PRIMARY KEY,
        seq bigserial,
        table_id text NOT NULL REFERENCES gds.tables(id),
        kind text NOT NULL CHECK (kind IN ('run', 'submit')),
        passed boolean NOT NULL,
        results jsonb NOT NULL,
        failed_predicates jsonb NOT NULL,
        sample jsonb,
        definition_version integer NOT NULL,
        gate1_version integer NOT NULL,
        data_version integer NOT NULL,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL
      );
      CREATE INDEX gate_proofs_latest ON gds.gate_proofs (table_id, seq DESC);
    `,
  },
  CERTIFICATION_MIGRATION,
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
  WAREHOUSE_NAMESPACE_MIGRATION,
  {
    version: 7,
    name: 'integration tokens: each table grant bound to the table id it was granted on',
    sql: `ALTER TABLE gds.integration_tokens ADD COLUMN table_ids jsonb NOT NULL DEFAULT '{}'::jsonb;
      ${BIND_EXISTING_GRANTS}`,
  },
  {
    version: 8,
    name: 'refresh-token reuse grace: the successor of a spent refresh token, sealed',
    sql: `
      ALTER TABLE gds.refresh_tokens ADD COLUMN successor_sealed text;
      ALTER TABLE gds.session_refresh_tokens ADD COLUMN successor_sealed text;
    `,
  },
  {
    version: 9,
    name: 'contracts: a revision per live contract, the version a contract write is computed from',
    sql: `ALTER TABLE gds.contracts ADD COLUMN revision integer NOT NULL DEFAULT 0;`,
  },
  {
    version: 10,
    name: 'recertification requests: one open per table and cause, signal count, resolution',
    sql: `
      ALTER TABLE gds.recertification_requests
        ADD COLUMN signal_count integer NOT NULL DEFAULT 1,
        ADD COLUMN last_seen_at timestamptz,
        ADD COLUMN resolved_by text,
        ADD COLUMN resolved_at timestamptz,
        ADD COLUMN resolved_version integer;
      UPDATE gds.recertification_requests SET last_seen_at = created_at;
      ALTER TABLE gds.recertification_requests ALTER COLUMN last_seen_at SET NOT NULL;
      -- Requests filed before they merged: the oldest open one per table and cause keeps the count and
      -- the latest details, the others are closed as merged into it.
      WITH ranked AS (
        SELECT id, table_id, cause, created_at, details,
               first_value(id) OVER w AS keeper,
               count(*) OVER (PARTITION BY table_id, cause) AS n,
               last_value(details) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS latest,
               max(created_at) OVER (PARTITION BY table_id, cause) AS last_seen
          FROM gds.recertification_requests WHERE status = 'OPEN'
        WINDOW w AS (PARTITION BY table_id, cause ORDER BY created_at, id)
      ), kept AS (
        UPDATE gds.recertification_requests r
           SET signal_count = ranked.n, details = ranked.latest, last_seen_at = ranked.last_seen
          FROM ranked WHERE r.id = ranked.id AND ranked.id = ranked.keeper
        RETURNING r.id
      )
      UPDATE gds.recertification_requests r
         SET status = 'DISMISSED', dismissed_at = ranked.created_at,
             details = COALESCE(r.details, '{}'::jsonb) || jsonb_build_object('mergedInto', ranked.keeper)
        FROM ranked WHERE r.id = ranked.id AND ranked.id <> ranked.keeper;
      CREATE UNIQUE INDEX recertification_one_open ON gds.recertification_requests (table_id, cause)
        WHERE status = 'OPEN';
    `,
  },
  {
    version: 13,
    name: 'token revocation: listing hints, last use, revoked access tokens',
    sql: `
      ALTER TABLE gds.integration_tokens ADD COLUMN client_token_hint text;
      ALTER TABLE gds.integration_tokens ADD COLUMN last_used_at timestamptz;
      ALTER TABLE gds.cli_tokens ADD COLUMN token_hint text;
      ALTER TABLE gds.cli_tokens ADD COLUMN last_used_at timestamptz;
      CREATE INDEX integration_tokens_by_workspace ON gds.integration_tokens (workspace_id, created_at);
      CREATE INDEX refresh_tokens_by_family ON gds.refresh_tokens (family_id);
      -- A session access token revoked by itself (gds auth revoke of a sign-in without a refresh family).
      CREATE TABLE gds.revoked_access_tokens (
        jti text PRIMARY KEY,
        workspace_id text NOT NULL REFERENCES gds.workspaces(id),
        expires_at timestamptz NOT NULL,
        revoked_at timestamptz NOT NULL
      );
    `,
  },
  {
    version: 15,
    name: 'table lists read by key, table names looked up by index',
    sql: `
      CREATE INDEX tables_listed ON gds.tables (workspace_id, created_at, id) WHERE active;
      CREATE INDEX tables_by_name ON gds.tables (workspace_id, lower(name)) WHERE active;
    `,
  },
  {
    version: 16,
    name: 'recertification signals look tables up by the object their source names',
    sql: `CREATE INDEX tables_by_source_object ON gds.tables (workspace_id, lower(split_part(source, '.', 2))) WHERE active;`,
  },
  {
    version: 17,
    name: 'state shared by server processes: rate-limit windows, dashboard sessions',
    sql: `
      -- One fixed window per limiter and key (limiter:key): its start (epoch ms) and the requests counted
      -- in it. Unlogged: a crash may only reset windows, and a count writes no WAL.
      CREATE UNLOGGED TABLE gds.rate_windows (
        key text PRIMARY KEY,
        window_start bigint NOT NULL,
        count integer NOT NULL
      );
      -- A dashboard sign-in: the SHA-256 of the cookie's session id, never the id itself.
      CREATE TABLE gds.dashboard_sessions (
        id_hash text PRIMARY KEY,
        user_id text NOT NULL REFERENCES gds.users(id),
        workspace_id text NOT NULL REFERENCES gds.workspaces(id),
        created_at timestamptz NOT NULL,
        expires_at timestamptz NOT NULL
      );
      CREATE INDEX dashboard_sessions_by_expiry ON gds.dashboard_sessions (expires_at);
    `,
  },
  {
    version: 18,
    name: 'jobs claimed by one worker among server processes: claimer, heartbeat, attempts',
    sql: `
      ALTER TABLE gds.jobs
        ADD COLUMN claimed_by text,
        ADD COLUMN heartbeat_at timestamptz,
        ADD COLUMN attempts integer NOT NULL DEFAULT 0;
      -- Jobs RUNNING before workers named themselves ran once, in a process that is gone by now.
      UPDATE gds.jobs SET attempts = 1 WHERE status <> 'QUEUED';
      CREATE INDEX jobs_running ON gds.jobs (started_at) WHERE status = 'RUNNING';
    `,
  },
  {
    version: 23,
    name: 'recertification requests listed by key',
    sql: `
      CREATE INDEX recertification_listed ON gds.recertification_requests (workspace_id, created_at, id);
      CREATE INDEX recertification_open_listed ON gds.recertification_requests (workspace_id, created_at, id)
        WHERE status = 'OPEN';
    `,
  },
  {
    version: 31,
    name: "the steward's queue: notifications closed when their table leaves PENDING_REVIEW, listed open by key",
    sql: `
      ALTER TABLE gds.notifications ADD COLUMN closed_at timestamptz;
      UPDATE gds.notifications n SET closed_at = n.created_at
        WHERE EXISTS (SELECT 1 FROM gds.tables t WHERE t.id = n.table_id AND (t.state <> 'PENDING_REVIEW' OR NOT t.active))
           OR EXISTS (SELECT 1 FROM gds.notifications m
                       WHERE m.table_id = n.table_id AND (m.created_at, m.id) > (n.created_at, n.id));
      CREATE INDEX notifications_open ON gds.notifications (workspace_id, created_at, id) WHERE closed_at IS NULL;
    `,
  },
  {
    version: 32,
    name: "CLI tokens: a name, unique among a person's live tokens",
    sql: `
      ALTER TABLE gds.cli_tokens ADD COLUMN name text;
      CREATE UNIQUE INDEX cli_tokens_live_name ON gds.cli_tokens (workspace_id, user_id, lower(name))
        WHERE revoked_at IS NULL AND name IS NOT NULL;
    `,
  },
  {
    version: 40,
    name: 'tables record the dbt project that owns them',
    sql: `
      ALTER TABLE gds.tables ADD COLUMN project text;
      CREATE INDEX tables_project ON gds.tables (workspace_id, project) WHERE active AND project IS NOT NULL;
    `,
  },
  {
    version: 60,
    name: 'recertification signals answered once per idempotency key',
    sql: `
      CREATE TABLE gds.recertify_signals (
        workspace_id text NOT NULL REFERENCES gds.workspaces(id),
        key text NOT NULL,
        request_hash text NOT NULL,
        response jsonb,
        created_at timestamptz NOT NULL,
        PRIMARY KEY (workspace_id, key)
      );
      CREATE INDEX recertify_signals_age ON gds.recertify_signals (created_at);
    `,
  },
  {
    version: 61,
    name: 'recertification requests of cause rebuild',
    sql: `
      ALTER TABLE gds.recertification_requests DROP CONSTRAINT recertification_requests_cause_check;
      ALTER TABLE gds.recertification_requests ADD CONSTRAINT recertification_requests_cause_check
        CHECK (cause IN ('drift', 'schema_change', 'ingest', 'manual', 'rebuild'));
    `,
  },
  {
    version: 62,
    name: 'recertification requests keep every signal merged into them',
    sql: `
      CREATE TABLE gds.recertification_signals (
        id text PRIMARY KEY,
        request_id text NOT NULL REFERENCES gds.recertification_requests(id),
        cause text NOT NULL,
        details jsonb NOT NULL,
        created_by text,
        created_at timestamptz NOT NULL
      );
      CREATE INDEX recertification_signals_by_request ON gds.recertification_signals (request_id, created_at, id);
      -- Requests filed before signals were kept: the one signal each still knows of, its latest (whose
      -- sender is known only when it was the request's only signal).
      INSERT INTO gds.recertification_signals (id, request_id, cause, details, created_by, created_at)
        SELECT 'rcs_' || id, id, cause, COALESCE(details, '{}'::jsonb),
               CASE WHEN signal_count = 1 THEN created_by END, last_seen_at
          FROM gds.recertification_requests;
    `,
  },
  {
    version: 63,
    name: 'table lists filtered by state or environment read by key',
    sql: `
      CREATE INDEX tables_listed_by_state ON gds.tables (workspace_id, state, created_at, id) WHERE active;
      CREATE INDEX tables_listed_by_environment ON gds.tables (workspace_id, environment_label, created_at, id)
        WHERE active;
    `,
  },
  {
    version: 64,
    name: "tables keep their artifact's text beside it, for the reads that pass it on",
    // A column PostgreSQL computes at every write of the row, never stale; its ADD rewrites gds.tables once
    // (100,000 tables: 3.7 s on PostgreSQL 15, 4.7 s on PGlite).
    sql: `ALTER TABLE gds.tables ADD COLUMN artifact_text text GENERATED ALWAYS AS (artifact::text) STORED;`,
  },
  {
    version: 65,
    name: 'a refresh token keeps its id across refreshes; only its secret rotates',
    // Spec §2.1: the refresh token is `<tokenId>.<secret>` and "the secret rotates on every successful refresh".
    // Each spent secret keeps its own row (reuse detection, the grace answer); token_id is the id presented
    // with it, carried from the family's first row. A row made before is its own token_id.
    sql: `
      ALTER TABLE gds.refresh_tokens ADD COLUMN token_id text;
      UPDATE gds.refresh_tokens SET token_id = id;
      ALTER TABLE gds.refresh_tokens ALTER COLUMN token_id SET NOT NULL;
      CREATE INDEX refresh_tokens_by_token ON gds.refresh_tokens (token_id, secret_hash);
    `,
  },
  {
    version: 66,
    name: 'table names and ids found by what they start with',
    // The table list's `prefix` (TAB completion): each a range of its index in the "C" collation, in order
    // (tables_by_name's default collation orders no prefix's names together on a PostgreSQL of another locale).
    sql: `
      CREATE INDEX tables_by_name_prefix ON gds.tables (workspace_id, (lower(name) COLLATE "C"), id) WHERE active;
      CREATE INDEX tables_by_id_prefix ON gds.tables (workspace_id, (id COLLATE "C")) WHERE active;
    `,
  },
  {
    version: 67,
    name: "the steward's queue read in the order its notifications were filed",
    // A notification's created_at is the app clock's inside the submitting transaction, so one can commit
    // behind a later key a steward already paged past. seq is handed out under a per-workspace lock held to
    // commit (notifySteward), so within a workspace it grows in commit order. Existing rows keep their order.
    sql: `
      CREATE SEQUENCE gds.notifications_seq;
      ALTER TABLE gds.notifications ADD COLUMN seq bigint;
      UPDATE gds.notifications n SET seq = o.seq
        FROM (SELECT id, row_number() OVER (ORDER BY created_at, id) AS seq FROM gds.notifications) o
       WHERE o.id = n.id;
      SELECT setval('gds.notifications_seq', COALESCE(max(seq), 0) + 1, false) FROM gds.notifications;
      ALTER TABLE gds.notifications ALTER COLUMN seq SET DEFAULT nextval('gds.notifications_seq'),
        ALTER COLUMN seq SET NOT NULL;
      ALTER SEQUENCE gds.notifications_seq OWNED BY gds.notifications.seq;
      DROP INDEX gds.notifications_open;
      CREATE INDEX notifications_open ON gds.notifications (workspace_id, seq) WHERE closed_at IS NULL;
    `,
  },
  {
    version: 68,
    name: "a project's tables found by its id's prefix, and tables by hand by their file name's",
    // GET /api/held-tables with `projectPrefix` and `filePrefix` (what `gds plan` reads of a large
    // environment): each a range of its index in the "C" collation, as tables_by_name_prefix.
    sql: `
      CREATE INDEX tables_by_project_prefix ON gds.tables (workspace_id, (project COLLATE "C"))
        WHERE active AND project IS NOT NULL;
      CREATE INDEX tables_by_file_prefix ON gds.tables (workspace_id, (lower(artifact->>'fileName') COLLATE "C"))
        WHERE active AND project IS NULL;
    `,
  },
  {
    version: 69,
    name: "an environment's Mode A tables counted from an index",
    // The first page of a narrowed GET /api/held-tables counts the environment's Mode A tables it leaves out
    // (heldLeftOut): from this index alone once the table is vacuumed (autovacuum's work on PostgreSQL),
    // instead of each row of the table (58,800 left out: 86-124 -> 23-62 ms at load 9-12, docs/bench.md).
    sql: `
      CREATE INDEX tables_mode_a_by_environment ON gds.tables (workspace_id, environment_label)
        INCLUDE (id, project) WHERE active AND mode = 'MODE_A';
    `,
  },
  {
    version: 70,
    name: 'months of history read by its newest rows: audit log by event type, active jobs, open notifications',
    // The audit log filtered by an eventType (newest first) walked the workspace's whole log when fewer than a
    // page matched (1,000,000 entries: 320-1,000 ms); a table's QUEUED or RUNNING jobs (`status`) and its open
    // notification (closed at each submission) were found among all its jobs or every open notification of the
    // service. Each is now a range of an index of what it asks for.
    sql: `
      CREATE INDEX audit_log_by_action ON gds.audit_log (workspace_id, action, seq);
      CREATE INDEX jobs_active_by_table ON gds.jobs (table_id, created_at, id) WHERE status IN ('QUEUED', 'RUNNING');
      CREATE INDEX notifications_open_by_table ON gds.notifications (table_id) WHERE closed_at IS NULL;
    `,
  },
  {
    version: 71,
    name: 'the audit log since a time read by time where its newest entries are older',
    // `since` found its window by walking the log by seq, filtered by created_at: when fewer than a page of the
    // newest entries were that recent, the walk read the whole log (1,000,000 entries: about 0.5 s, PGlite
    // 2-3 s). The window is read by time below the newest entries (src/server/audit.ts, sincePage).
    // Led by the time: an index led by workspace_id was taken by the planner (PGlite's, and PostgreSQL's
    // before statistics) for every read of a workspace's log, with a sort of all of it.
    sql: `
      CREATE INDEX audit_log_by_time ON gds.audit_log (created_at, workspace_id);
    `,
  },
  {
    version: 72,
    name: "the semantic contract's revision on each table, stamped on review proofs",
    // A contract changed after `gate submit` (its grain key is what Gate 1's grain-uniqueness predicate
    // checked) makes the proof stale. Every table starts at revision 0 and every proof already taken is stamped
    // 0: fresh until the contract next changes. A proof written without the column (by a server of an earlier
    // build on the same database) stays NULL: not compared on the contract.
    sql: `
      ALTER TABLE gds.tables ADD COLUMN contract_version integer NOT NULL DEFAULT 0;
      ALTER TABLE gds.gate_proofs ADD COLUMN contract_version integer DEFAULT 0;
      ALTER TABLE gds.gate_proofs ALTER COLUMN contract_version DROP DEFAULT;
    `,
  },
  {
    version: 73,
    name: 'Gate 1 submissions answered once per idempotency key',
    // A submission sent again with its Idempotency-Key (a pipeline step re-run) gets its first answer: no
    // second scan, proof or steward notification (src/server/idempotency.ts).
    // Kept as the recertify signal's keys are (migration 60): its columns, primary key and age index.
    sql: `
      CREATE TABLE gds.gate_submission_keys (LIKE gds.recertify_signals INCLUDING ALL);
      ALTER TABLE gds.gate_submission_keys ADD FOREIGN KEY (workspace_id) REFERENCES gds.workspaces(id);
    `,
  },
  {
    version: 74,
    name: 'Gate 1 submissions in flight by idempotency key',
    // A submission's scan can outlast a proxy's timeout: the client's retry with the same key used to start a
    // second scan of the table beside the first. The scan's key is marked here, committed before the scan and
    // refreshed while it runs, so a request with the key waits for the first's answer instead
    // (src/server/idempotency.ts, whileInFlight). \`holder\`: the request holding the mark.
    sql: `
      CREATE TABLE gds.gate_submission_scans (
        workspace_id text NOT NULL REFERENCES gds.workspaces(id),
        key text NOT NULL,
        request_hash text NOT NULL,
        holder text NOT NULL,
        heartbeat_at timestamptz NOT NULL,
        PRIMARY KEY (workspace_id, key)
      );
    `,
  },
  {
    version: 75,
    name: 'a table deleted before its open work was closed: its requests dismissed, its jobs cancelled',
    // Since 9d816d2c deleting a table dismisses its OPEN recertification requests and cancels its QUEUED or
    // RUNNING jobs, each audited with reason 'table deleted' (src/server/routes/tables.ts). Tables deleted
    // (inactive) before that kept both: a job that would run against a table that is gone, requests no one can
    // act on. They are closed as the delete closes them, by the user who deleted the table (its TABLE_DELETED
    // audit entry; none: no user), the entries marked with this migration. Only OPEN and QUEUED or RUNNING
    // rows change, so it is a no-op once applied. Only the deleted tables with such work are read, and their
    // deleters in one pass of the audit log (the log has no index by table: a lookup a table was a scan of the
    // whole log for each of every deleted table).
    sql: `
      CREATE TEMPORARY TABLE deleted_tables ON COMMIT DROP AS
        SELECT t.id, t.workspace_id, t.environment_label, t.gate_mode, NULL::text AS deleter
          FROM gds.tables t
         WHERE NOT t.active
           AND (EXISTS (SELECT 1 FROM gds.recertification_requests r WHERE r.table_id = t.id AND r.status = 'OPEN')
             OR EXISTS (SELECT 1 FROM gds.jobs j WHERE j.table_id = t.id AND j.status IN ('QUEUED', 'RUNNING')));
      UPDATE deleted_tables d SET deleter = a.user_id
        FROM (SELECT DISTINCT ON (table_id) table_id, user_id FROM gds.audit_log
               WHERE action = 'TABLE_DELETED' AND table_id IN (SELECT id FROM deleted_tables)
               ORDER BY table_id, seq DESC) a
       WHERE a.table_id = d.id;
      WITH dismissed AS (
        UPDATE gds.recertification_requests r
           SET status = 'DISMISSED', dismissed_by = d.deleter, dismissed_at = now()
          FROM deleted_tables d
         WHERE r.table_id = d.id AND r.status = 'OPEN'
        RETURNING r.id, r.cause, d.id AS table_id, d.workspace_id, d.environment_label, d.gate_mode, d.deleter
      )
      INSERT INTO gds.audit_log (id, workspace_id, user_id, table_id, action, resource, environment_label,
                                 gate_mode, details, created_at)
      SELECT 'aud_' || substr(md5(gen_random_uuid()::text), 1, 16), workspace_id, deleter, table_id,
             'RECERTIFICATION_DISMISSED', 'semantic_contract', environment_label, gate_mode,
             jsonb_build_object('requestId', id, 'cause', cause, 'reason', 'table deleted', 'migration', 75),
             now()
        FROM dismissed ORDER BY id;
      WITH open_jobs AS (
        SELECT j.id, j.type, j.status, d.id AS table_id, d.workspace_id, d.environment_label, d.gate_mode,
               d.deleter
          FROM gds.jobs j JOIN deleted_tables d ON d.id = j.table_id
         WHERE j.status IN ('QUEUED', 'RUNNING')
           FOR UPDATE OF j
      ), cancelled AS (
        UPDATE gds.jobs j SET status = 'CANCELLED', finished_at = now()
          FROM open_jobs WHERE j.id = open_jobs.id
        RETURNING open_jobs.*
      )
      INSERT INTO gds.audit_log (id, workspace_id, user_id, table_id, action, resource, environment_label,
                                 gate_mode, details, created_at)
      SELECT 'aud_' || substr(md5(gen_random_uuid()::text), 1, 16), workspace_id, deleter, table_id,
             'GATE_JOB_CANCELLED', 'gate_job', environment_label, gate_mode,
             jsonb_build_object('jobId', id, 'type', type, 'from', status, 'reason', 'table deleted',
                                'migration', 75),
             now()
        FROM cancelled ORDER BY id;
    `,
  },
  {
    version: 76,
    name: "open recertification requests found by their id's prefix",
    // GET /api/recertification-requests with `prefix` (TAB completing `gds recertification dismiss`): a range
    // of this index in the "C" collation, read in order, as tables_by_id_prefix serves the table list's.
    sql: `
      CREATE INDEX recertification_open_by_id ON gds.recertification_requests (workspace_id, (id COLLATE "C"))
        WHERE status = 'OPEN';
    `,
  },
  {
    version: 77,
    name: 'recertification requests of a table, whatever their status',
    // A table's requests with `all` (the dashboard's table page, `recertification list --table … --all`): read
    // in key order from this index, not by walking the workspace's every request (recertification_one_open
    // covers only the OPEN ones).
    sql: `
      CREATE INDEX recertification_of_table ON gds.recertification_requests (table_id, created_at, id);
    `,
  },
  {
    version: 78,
    name: 'certified views of the old form replaced at a start, until one leaves none',
    // Work a start does while its row is here (upgradeZonelessViews, certification/view.ts): every start after
    // the one that left none reads this row only, not every certified view (0.7-3 s at 5,000 of them).
    sql: `
      CREATE TABLE gds.start_up_tasks (name text PRIMARY KEY);
      INSERT INTO gds.start_up_tasks (name) VALUES ('zoneless_certified_views');
    `,
  },
  {
    version: 79,
    name: "a person's tokens found by their holder",
    // `GET /api/cli-tokens?userId=`, `GET /api/integration/tokens?userId=` and a MEMBER's own list read the
    // holder's tokens, in the list's order, not the workspace's every token (cli_tokens_live_name holds only
    // live named ones).
    sql: `
      CREATE INDEX cli_tokens_by_user ON gds.cli_tokens (workspace_id, user_id, created_at DESC, id);
      CREATE INDEX integration_tokens_by_user ON gds.integration_tokens (workspace_id, user_id, created_at DESC, id);
    `,
  },
];

/** Applies every migration not yet applied, each in its own transaction (tests pass an earlier schema's list). */
export async function migrate(db: Db, migrations: readonly Migration[] = MIGRATIONS): Promise<void> {
  await db.exec(`
    CREATE SCHEMA IF NOT EXISTS gds;
    CREATE TABLE IF NOT EXISTS gds.schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    );
  `);
  const applied = new Map(
    (
      await db.query<{ version: number; name: string }>('SELECT version, name FROM gds.schema_migrations')
    ).map((r) => [r.version, r.name]),
  );
  for (const migration of migrations) {
    const appliedName = applied.get(migration.version);
    if (appliedName !== undefined && appliedName !== migration.name) {
      throw new Error(
        `The database records migration ${migration.version} as "${appliedName}", but this server's migration ` +
          `${migration.version} is "${migration.name}": another build of the reference server made it. ` +
          'Start this one on a fresh --data-dir or database.',
      );
    }
    if (appliedName !== undefined) continue;
    await db.transaction(async (tx) => {
      await tx.exec(migration.sql);
      await tx.query('INSERT INTO gds.schema_migrations (version, name) VALUES ($1, $2)', [
        migration.version,
        migration.name,
      ]);
    });
  }
}
