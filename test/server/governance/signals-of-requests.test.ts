// GET /api/recertification-signals reads the signals of up to 100 requests a page at a time
// (listSignalsOfRequests). A page must cost its own rows, not every signal after the cursor: read sorted across
// the requests, each page read all the signals left, and `gds recertification list --json` over 100 requests of
// 2,000 signals each took 32 s of the database. Counted here as the signal rows the database reads
// (pg_stat_xact_user_tables), on PGlite and PostgreSQL.
import { describe, expect, it } from 'vitest';
import { listSignalsOfRequests } from '../../../src/server/governance/recertification-requests.js';
import type { ListKey } from '../../../src/server/list-cursor.js';
import { ENGINES, useEngineDb } from '../../helpers/engines.js';
import { needs } from '../../helpers/skip.js';
import { schemaBefore, T0 } from '../db/earlier-schema.js';

const REQUESTS = 3;
const SIGNALS = 300;
const PAGE = 100;

describe.each(ENGINES)('the signals of several requests, a page at a time ($engine)', (engine) => {
  const db = useEngineDb(engine, async (opened) => {
    await schemaBefore(opened, Number.MAX_SAFE_INTEGER);
    await opened.query(
      `INSERT INTO gds.tables (id, workspace_id, slug, name, mode, state, gate_mode, environment_label, owner_id,
                               columns, created_at, updated_at, active)
       SELECT 'tbl_' || i, 'ws_a', 'tbl_' || i, 'tbl_' || i, 'MODE_A', 'CERTIFIED', 'ADVISORY', 'dev', 'usr_a',
              '[]', $1, $1, true FROM generate_series(1, ${REQUESTS}) i`,
      [T0],
    );
    await opened.query(
      `INSERT INTO gds.recertification_requests (id, workspace_id, table_id, cause, status, created_at, last_seen_at)
       SELECT 'rcr_' || i, 'ws_a', 'tbl_' || i, 'manual', 'OPEN', $1, $1 FROM generate_series(1, ${REQUESTS}) i`,
      [T0],
    );
    // The requests' signals interleaved in time, as a nightly run merging into each of them files them.
    await opened.query(
      `INSERT INTO gds.recertification_signals (id, request_id, cause, details, created_by, created_at)
       SELECT 'rcs_' || i || '_' || n, 'rcr_' || i, 'manual', '{}'::jsonb, NULL,
              $1::timestamptz + n * interval '1 minute' + i * interval '1 second'
         FROM generate_series(1, ${REQUESTS}) i, generate_series(1, ${SIGNALS}) n`,
      [T0],
    );
  });

  it(
    'reads every signal once, each request oldest first, each page only its own rows',
    needs(engine.skip),
    async () => {
      const ids = Array.from({ length: REQUESTS }, (_, i) => `rcr_${i + 1}`);
      const { seen, read } = await db().transaction(async (tx) => {
        const signals: Array<{ requestId: string; id: string; createdAt: string }> = [];
        let after: ListKey | undefined;
        for (;;) {
          const page = await listSignalsOfRequests(tx, 'ws_a', ids, {
            environments: null,
            limit: PAGE,
            after,
          });
          expect(page.signals.length).toBeLessThanOrEqual(PAGE);
          signals.push(...page.signals);
          if (page.next === null) break;
          after = page.next;
        }
        const [stats] = await tx.query<{ tuples: string | number }>(
          `SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) AS tuples FROM pg_stat_xact_user_tables
          WHERE schemaname = 'gds' AND relname = 'recertification_signals'`,
        );
        return { seen: signals, read: Number(stats?.tuples ?? 0) };
      });
      expect(seen).toHaveLength(REQUESTS * SIGNALS);
      expect(new Set(seen.map((s) => s.id)).size).toBe(REQUESTS * SIGNALS);
      for (const id of ids) {
        const times = seen.filter((s) => s.requestId === id).map((s) => s.createdAt);
        expect(times).toHaveLength(SIGNALS);
        expect(times).toEqual([...times].sort());
      }
      // About each signal once (1,513 rows fetched here for 900 signals); read sorted across the requests, each of
      // the nine pages fetched every signal after its cursor: 4,500, growing as the square of the signals.
      expect(read).toBeLessThan(REQUESTS * SIGNALS * 2);
    },
  );
});
