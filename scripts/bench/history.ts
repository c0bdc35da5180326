// Months of daily CI in the server's history tables, and what the daily commands read of them: 2,000 Mode A
// tables (copies of the seeded `customers`, half of them waiting for review), and per day of CI a submission
// of each (its proof and gate job), a steward notification of each table waiting for review (the earlier one
// closed) and 10,000 audit entries. The requests behind `gds plan --submit` (GET /api/held-tables, every
// page), `gds apply --submit` (a submission's reads and writes: the newest submit proof, closing the table's
// open notification), `gds review` (GET /api/notifications, its first page and its total), `gds audit list`
// (the newest page, by eventType, since an hour ago, a page deep in by cursor), `gds status` and a table's
// gate jobs, each the median of 5, after 1, 10 and 100 days (GDS_BENCH_HISTORY_DAYS; a server of its own each)
// on PGlite and, with GDS_TEST_DATABASE_URL, on PostgreSQL (GDS_BENCH_ENGINE for one). What grows with the
// days and not with the answer is a defect: a read must be bounded by the newest rows. GDS_BENCH_HISTORY_EXPLAIN=1
// prints each read's plan on stderr.
import { performance } from 'node:perf_hooks';
import { countText } from '../../src/core/count-text.js';
import type { TestServer } from '../../test/helpers/server.js';
import { startTestServer } from '../../test/helpers/server.js';
import { copyTable } from '../../test/helpers/table-copies.js';
import type { BenchModule, BenchRow } from './types.js';

const TABLES = 2_000;
const DAYS = (process.env.GDS_BENCH_HISTORY_DAYS ?? '1,10,100').split(',').map(Number);
const AUDIT_A_DAY = 10_000;
const PREFIX = 'hist';
const DAY_MS = 86_400_000;

type Engine = 'PGlite' | 'PostgreSQL';

/**
 * Adds `days` days of CI to the history, the last one yesterday (each statement one kind of row, in the order
 * the server writes them, so seq and time grow together).
 */
async function addDays(server: TestServer, days: number): Promise<void> {
  const start = new Date(Date.now() - (days + 1) * DAY_MS).toISOString();
  const [from, to] = [1, days];
  const owner = server.user('OWNER').userId;
  const day = (column = 'd') => `timestamptz '${start}' + ${column} * interval '1 day'`;
  const tables = `SELECT id, workspace_id, state, definition_version, gate1_version, data_version,
                         row_number() OVER (ORDER BY id) AS n
                    FROM gds.tables WHERE id LIKE 'tbl_${PREFIX}_%'`;
  await server.sql(
    `INSERT INTO gds.jobs (id, workspace_id, table_id, type, status, params, created_by, created_at, started_at,
                           finished_at, result, attempts)
     SELECT 'job_${PREFIX}_' || t.n || '_' || d, t.workspace_id, t.id, 'gate1', 'SUCCEEDED', '{}', $1,
            ${day()} + t.n * interval '1 millisecond', ${day()} + t.n * interval '1 millisecond',
            ${day()} + t.n * interval '1 millisecond' + interval '1 second', '{"passed": true}', 1
       FROM (${tables}) t, generate_series($2::int, $3::int) d ORDER BY d, t.n`,
    [owner, from, to],
  );
  await server.sql(
    `INSERT INTO gds.gate_proofs (id, table_id, kind, passed, results, failed_predicates, sample,
                                  definition_version, gate1_version, data_version, created_by, created_at)
     SELECT 'prf_${PREFIX}_' || t.n || '_' || d, t.id, 'submit', true,
            '[{"name": "record_count", "passed": true, "detail": "10 rows"}]', '[]', NULL,
            t.definition_version, t.gate1_version, t.data_version, $1, ${day()} + t.n * interval '1 millisecond'
       FROM (${tables}) t, generate_series($2::int, $3::int) d ORDER BY d, t.n`,
    [owner, from, to],
  );
  // Every table waiting for review has one open notification, its newest submission's.
  await server.sql(
    `UPDATE gds.notifications SET closed_at = created_at WHERE closed_at IS NULL AND table_id LIKE 'tbl_${PREFIX}_%'`,
  );
  await server.sql(
    `INSERT INTO gds.notifications (id, workspace_id, table_id, recipient_role, kind, message, details, created_at,
                                    closed_at)
     SELECT 'ntf_${PREFIX}_' || t.n || '_' || d, t.workspace_id, t.id, 'STEWARD', 'gate_submitted',
            'Table ' || t.id || ' was submitted for review: Gate 1 passed.',
            jsonb_build_object('proofId', 'prf_${PREFIX}_' || t.n || '_' || d, 'submittedBy', $1::text),
            ${day()} + t.n * interval '1 millisecond',
            CASE WHEN d < $3 THEN ${day()} + interval '1 day' END
       FROM (${tables}) t, generate_series($2::int, $3::int) d
      WHERE t.state = 'PENDING_REVIEW' ORDER BY d, t.n`,
    [owner, from, to],
  );
  // Most entries are the submissions' own; one in a thousand a certification.
  await server.sql(
    `INSERT INTO gds.audit_log (id, workspace_id, user_id, table_id, action, resource, environment_label,
                                gate_mode, details, created_at)
     SELECT 'aud_${PREFIX}_' || d || '_' || i, w.id, $1, 'tbl_${PREFIX}_' || (i % ${TABLES} + 1),
            CASE WHEN i % 1000 = 0 THEN 'TABLE_CERTIFIED' WHEN i % 2 = 0 THEN 'STEWARD_NOTIFIED'
                 ELSE 'RECERTIFICATION_REQUESTED' END,
            'gate_proof', 'dev', 'ENFORCING', '{"proofId": "prf_x"}',
            ${day()} + i * interval '1 millisecond'
       FROM (SELECT id FROM gds.workspaces ORDER BY created_at, id LIMIT 1) w,
            generate_series($2::int, $3::int) d, generate_series(1, ${AUDIT_A_DAY}) i ORDER BY d, i`,
    [owner, from, to],
  );
  // PostgreSQL's autovacuum keeps statistics, and the embedded server analyses a table changed by a tenth within
  // a minute (PgliteWorkerDb.keepStatistics): the bench analyses at once rather than wait for either.
  for (const table of ['jobs', 'gate_proofs', 'notifications', 'audit_log'])
    await server.sql(`ANALYZE gds.${table}`);
}

/** The median of `rounds` timings of `run` (after one untimed run), ms. */
async function timed(run: () => Promise<unknown>, rounds = 5): Promise<number> {
  await run();
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[Math.floor(rounds / 2)] ?? NaN;
}

async function measure(engine: Engine, days: number): Promise<BenchRow[]> {
  const server = await startTestServer({
    rateLimit: 1_000_000_000,
    queryTimeoutMs: 600_000,
    contractCheck: false,
    ...(engine === 'PostgreSQL' ? { database: 'postgres' as const } : {}),
  });
  try {
    const template = server.table('customers');
    await copyTable(server, template.id, TABLES, PREFIX, {
      state: `CASE WHEN g % 2 = 0 THEN 'PENDING_REVIEW' ELSE 'DRAFT' END`,
    });
    if (engine === 'PostgreSQL') await server.sql('ANALYZE gds.tables');
    const token = server.user('OWNER').cliToken;
    const environment = template.environmentLabel;
    const get = async (path: string) => {
      const response = await server.request('GET', path, { token });
      if (response.status !== 200) throw new Error(`GET ${path} answered ${response.status}`);
      return response.body;
    };
    const heldPages = async () => {
      let cursor: string | null = null;
      do {
        const query: string = `environment=${environment}&limit=500${cursor === null ? '' : `&cursor=${cursor}`}`;
        cursor = ((await get(`/api/held-tables?${query}`)) as { nextCursor: string | null }).nextCursor;
      } while (cursor !== null);
    };
    const pending = `tbl_${PREFIX}_2`;
    const rows: BenchRow[] = [];
    {
      const started = performance.now();
      await addDays(server, days);
      const made = ((performance.now() - started) / 1000).toFixed(1);
      const [counts] = await server.sql<Record<string, string>>(
        `SELECT (SELECT count(*) FROM gds.gate_proofs) AS proofs, (SELECT count(*) FROM gds.audit_log) AS audit,
                (SELECT count(*) FROM gds.notifications) AS notifications, (SELECT count(*) FROM gds.jobs) AS jobs`,
      );
      const since = new Date(Date.now() - 3_600_000).toISOString();
      const sinceDay = new Date(Date.now() - 1.5 * DAY_MS).toISOString();
      const deep = (
        await server.sql<{ seq: string }>(
          `SELECT seq::text FROM gds.audit_log ORDER BY seq DESC OFFSET ${Math.floor((days * AUDIT_A_DAY) / 2)} LIMIT 1`,
        )
      )[0]?.seq;
      const cursor = Buffer.from(JSON.stringify({ before: deep })).toString('base64url');
      const reads: Array<[string, () => Promise<unknown>]> = [
        ['plan: held tables, every page (stale submissions)', heldPages],
        [
          'apply --submit: a submission of a table waiting for review',
          async () => {
            const response = await server.request('POST', `/api/tables/${pending}/gate-submissions`, {
              token,
              body: {},
            });
            if (response.status !== 201) throw new Error(`submission answered ${response.status}`);
          },
        ],
        ['review: first page and total', () => get('/api/notifications?limit=50')],
        ['audit list: newest 50', () => get('/api/workspace/audit-log?limit=50')],
        [
          'audit list: eventType TABLE_CERTIFIED',
          () => get('/api/workspace/audit-log?limit=50&eventType=TABLE_CERTIFIED'),
        ],
        [
          'audit list: eventType CLI_TOKEN_CREATED (none)',
          () => get('/api/workspace/audit-log?limit=50&eventType=CLI_TOKEN_CREATED'),
        ],
        ['audit list: since an hour ago', () => get(`/api/workspace/audit-log?limit=200&since=${since}`)],
        ['audit list: since 36 hours ago', () => get(`/api/workspace/audit-log?limit=200&since=${sinceDay}`)],
        [
          'audit list: eventType TABLE_CERTIFIED since an hour ago',
          () => get(`/api/workspace/audit-log?limit=50&eventType=TABLE_CERTIFIED&since=${since}`),
        ],
        [
          'audit list: a page halfway by cursor',
          () => get(`/api/workspace/audit-log?limit=50&cursor=${cursor}`),
        ],
        ['status of a table', () => get(`/api/tables/${pending}/status`)],
        ['gate jobs of a table', () => get(`/api/tables/${pending}/gate-jobs`)],
      ];
      if (process.env.GDS_BENCH_HISTORY_EXPLAIN === '1') await explainReads(server, pending, since);
      for (const [name, run] of reads) {
        if (process.env.GDS_BENCH_HISTORY_SCANS === '1') await printScans(server, name, run);
        const ms = await timed(run);
        rows.push({
          section: 'history',
          name: `${name} (${engine}, ${days} days)`,
          value: `${ms.toFixed(1)} ms`,
          note: `${countText(Number(counts?.proofs))} proofs, ${countText(Number(counts?.audit))} audit entries, ${countText(Number(counts?.notifications))} notifications, ${countText(Number(counts?.jobs))} jobs (added in ${made} s)`,
        });
        process.stderr.write(`${rows.at(-1)?.name}: ${rows.at(-1)?.value}\n`);
      }
    }
    return rows;
  } finally {
    await server.close();
  }
}

/**
 * GDS_BENCH_HISTORY_SCANS=1: the rows one run of `run` read of each history table (pg_stat_user_tables'
 * sequential and index tuples), on stderr: what grows with the history shows there, whatever the plan.
 */
async function printScans(server: TestServer, name: string, run: () => Promise<unknown>): Promise<void> {
  const read = async () =>
    new Map(
      (
        await server.sql<{ relname: string; n: string }>(
          `SELECT relname, (COALESCE(seq_tup_read, 0) + COALESCE(idx_tup_fetch, 0))::text AS n
             FROM pg_stat_user_tables WHERE schemaname = 'gds'`,
        )
      ).map((r) => [r.relname, Number(r.n)]),
    );
  // PostgreSQL publishes a backend's counts when it goes idle, at most once a second.
  const settle = () => new Promise((resolve) => setTimeout(resolve, 1_100));
  await settle();
  const before = await read();
  await run();
  await settle();
  const after = await read();
  const grown = [...after].flatMap(([table, n]) => {
    const delta = n - (before.get(table) ?? 0);
    return delta > 0 ? [`${table} ${delta}`] : [];
  });
  process.stderr.write(`scans ${name}: ${grown.join(', ')}\n`);
}

/** GDS_BENCH_HISTORY_EXPLAIN=1: the plan of each history read, on stderr (a check, not a figure). */
async function explainReads(server: TestServer, pending: string, since: string): Promise<void> {
  const workspace = `'${server.user('OWNER').workspaceId}'`;
  const ids = `ARRAY(SELECT id FROM gds.tables WHERE id LIKE 'tbl_${PREFIX}_%' AND state = 'PENDING_REVIEW' ORDER BY id LIMIT 250)`;
  const queries: Record<string, string> = {
    staleSubmissions: `SELECT t.id FROM gds.tables t
       LEFT JOIN LATERAL (SELECT p.definition_version, p.gate1_version, p.data_version FROM gds.gate_proofs p
                           WHERE p.table_id = t.id AND p.kind = 'submit' ORDER BY p.seq DESC LIMIT 1) p ON true
      WHERE t.id = ANY(${ids})
        AND (p.definition_version IS NULL OR p.definition_version <> t.definition_version
             OR p.gate1_version <> t.gate1_version OR p.data_version <> t.data_version)`,
    latestSubmitProof: `SELECT id FROM gds.gate_proofs p WHERE p.table_id = '${pending}' AND p.kind = 'submit' ORDER BY p.seq DESC LIMIT 1`,
    closeNotifications: `UPDATE gds.notifications SET closed_at = closed_at WHERE table_id = '${pending}' AND closed_at IS NULL`,
    auditNewest: `SELECT seq FROM gds.audit_log WHERE workspace_id = ${workspace} ORDER BY seq DESC LIMIT 51`,
    auditEventType: `SELECT seq FROM gds.audit_log WHERE workspace_id = ${workspace} AND action = 'TABLE_CERTIFIED' ORDER BY seq DESC LIMIT 51`,
    auditEventTypeNone: `SELECT seq FROM gds.audit_log WHERE workspace_id = ${workspace} AND action = 'CLI_TOKEN_CREATED' ORDER BY seq DESC LIMIT 51`,
    auditSinceEventType: `SELECT seq FROM gds.audit_log WHERE workspace_id = ${workspace} AND action = 'TABLE_CERTIFIED'
      AND created_at >= '${since}' ORDER BY seq DESC LIMIT 51`,
    auditSinceNewest: `SELECT seq, created_at >= '${since}' FROM gds.audit_log WHERE workspace_id = ${workspace} ORDER BY seq DESC LIMIT 201`,
    auditSinceByTime: `WITH in_window AS MATERIALIZED (SELECT seq FROM gds.audit_log
      WHERE workspace_id = ${workspace} AND created_at >= '${since}' AND seq + 0 < 9223372036854775807)
      SELECT seq FROM in_window ORDER BY in_window.seq DESC LIMIT 201`,
    activeJobs: `SELECT id FROM gds.jobs WHERE table_id = '${pending}' AND status IN ('QUEUED', 'RUNNING') ORDER BY created_at, id`,
    recentJobs: `SELECT id FROM gds.jobs WHERE table_id = '${pending}' ORDER BY created_at DESC, id DESC LIMIT 20`,
    queueCount: `SELECT count(*) FROM gds.notifications n JOIN gds.tables t ON t.id = n.table_id
      WHERE n.workspace_id = ${workspace} AND n.closed_at IS NULL AND t.active AND t.state = 'PENDING_REVIEW'`,
    uncertifiedProofLateral: `SELECT s.definition_version FROM gds.gate_proofs s
      WHERE NULL::timestamptz IS NOT NULL AND s.table_id = '${pending}' AND s.kind = 'submit'
        AND s.created_at <= NULL::timestamptz ORDER BY s.seq DESC LIMIT 1`,
  };
  for (const [name, query] of Object.entries(queries)) {
    const analyze = name === 'closeNotifications' ? '' : 'ANALYZE, ';
    const plan = await server.sql<{ 'QUERY PLAN': string }>(
      `EXPLAIN (${analyze}COSTS OFF, BUFFERS) ${query}`,
    );
    process.stderr.write(`-- ${name}\n${plan.map((r) => r['QUERY PLAN']).join('\n')}\n`);
  }
}

export const run: BenchModule = async () => {
  const engines: Engine[] = (process.env.GDS_BENCH_ENGINE as Engine | undefined)
    ? [process.env.GDS_BENCH_ENGINE as Engine]
    : process.env.GDS_TEST_DATABASE_URL === undefined
      ? ['PGlite']
      : ['PGlite', 'PostgreSQL'];
  const rows: BenchRow[] = [];
  for (const engine of engines) for (const days of DAYS) rows.push(...(await measure(engine, days)));
  return rows;
};
