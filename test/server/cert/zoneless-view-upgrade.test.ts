// A Mode B certified view published before b129f47e casts a record's timestamp with ::timestamptz, so a
// timestamp written without a zone reads in the zone of whoever reads the view. The server's start replaces such
// a view in place by today's form, once: its readers then get the time the checks passed, and the objects built
// on it, its comment (the version served) and its grants stay.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { publishCertifiedView, upgradeZonelessViews } from '../../../src/server/certification/view.js';
import type { Db, Queryable } from '../../../src/server/db/handle.js';
import { MIGRATIONS } from '../../../src/server/db/migrations.js';
import type { GateTable } from '../../../src/server/gates/table.js';
import { loadGateTable } from '../../../src/server/gates/table.js';
import { quoteIdent } from '../../../src/server/warehouse.js';
import { ENGINES, useEngineDb } from '../../helpers/engines.js';
import { oneDatabase } from '../../helpers/one-database.js';
import { needs } from '../../helpers/skip.js';
import { seededGateTables } from '../gates/seeded-gate-tables.js';

/** A record's timestamp, with a zone or not: each is 10:00 at UTC for the checks. */
const SEEN_AT = [
  '2026-03-01T10:00:00',
  '2026-03-01 10:00',
  '2026-03-01T10:00:00Z',
  '2026-03-01T11:00:00+01:00',
];

describe.each(ENGINES)(
  'certified views published before timestamps without a zone read at UTC, on $engine',
  (engine) => {
    let contacts: GateTable;
    let view: string;
    const clock = () => Date.now();

    // crm_contacts (CERTIFIED) with one column, a timestamp, its records one value each, and its view published.
    const opened = useEngineDb(engine, async (db) => {
      const seeded = (await seededGateTables(db, '{}')).contacts;
      await db.query(
        `UPDATE gds.tables SET columns = '[{"name": "seen_at", "type": "timestamp", "required": false}]'
          WHERE id = $1`,
        [seeded.id],
      );
      const records = await db.query<{ id: string }>('SELECT id FROM gds.records WHERE table_id = $1', [
        seeded.id,
      ]);
      for (const [index, record] of records.entries()) {
        await db.query(
          `UPDATE gds.records SET data = data || jsonb_build_object('seen_at', $3::text)
            WHERE table_id = $1 AND id = $2`,
          [seeded.id, record.id, SEEN_AT[index % SEEN_AT.length]],
        );
      }
      contacts = await loadGateTable(db, seeded.workspaceId, seeded.id);
      view = await db.transaction((tx) => publishCertifiedView(tx, contacts));
    });

    const quoted = () => view.split('.').map(quoteIdent).join('.');

    /**
     * The view as the server published it before b129f47e, a view built on it, and its comment as certify left it;
     * and the start's task to replace it, which the migration of a database an earlier server left files.
     */
    async function publishedTheOldWay(): Promise<void> {
      await opened().exec(
        `CREATE OR REPLACE VIEW ${quoted()} AS SELECT id, (data->>'seen_at')::timestamptz AS seen_at
           FROM gds.records WHERE table_id = '${contacts.id}';
         CREATE OR REPLACE VIEW public.contacts_seen AS SELECT id, seen_at FROM ${quoted()};
         COMMENT ON VIEW ${quoted()} IS 'gds certified view of ${contacts.id} v1';
         INSERT INTO gds.start_up_tasks (name) VALUES ('zoneless_certified_views') ON CONFLICT DO NOTHING;`,
      );
    }

    /** Each distinct time the records read as through `relation` in `zone`, at UTC, with how many read so. */
    const readIn = (zone: string, relation: string) =>
      opened().transaction(async (tx) => {
        await tx.query(`SELECT set_config('TimeZone', $1, true)`, [zone]);
        return tx.query<{ seen: string; n: number }>(
          `SELECT to_char(seen_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS seen, count(*)::int AS n
           FROM ${relation} GROUP BY 1 ORDER BY 1`,
        );
      });

    const startUpAudits = async () =>
      (
        await opened().query<{ n: number }>(
          `SELECT count(*)::int AS n FROM gds.audit_log
          WHERE table_id = $1 AND action = 'CERTIFIED_VIEW_REPUBLISHED' AND details->>'via' = 'start-up'`,
          [contacts.id],
        )
      )[0]?.n;

    it(
      'a start replaces it once; read in New York it then gives every record the time the checks passed',
      needs(engine.skip),
      async () => {
        await publishedTheOldWay();
        const records = (
          await opened().query<{ n: number }>(
            'SELECT count(*)::int AS n FROM gds.records WHERE table_id = $1',
            [contacts.id],
          )
        )[0]?.n;
        // The old form: a record written without a zone reads at New York's 10:00, 15:00 at UTC.
        expect((await readIn('America/New_York', quoted())).map((r) => r.seen)).toContain(
          '2026-03-01T15:00:00Z',
        );

        const warnings: string[] = [];
        expect(await upgradeZonelessViews(opened(), clock, 5_000, (line) => warnings.push(line))).toEqual([
          view,
        ]);
        expect(warnings).toEqual([]);
        for (const relation of [quoted(), 'public.contacts_seen']) {
          expect(await readIn('America/New_York', relation)).toEqual([
            { seen: '2026-03-01T10:00:00Z', n: records },
          ]);
        }
        const [comment] = await opened().query<{ comment: string }>(
          `SELECT obj_description(to_regclass($1), 'pg_class') AS comment`,
          [quoted()],
        );
        expect(comment?.comment).toBe(`gds certified view of ${contacts.id} v1`);
        expect(await startUpAudits()).toBe(1);

        // The next start finds nothing to replace.
        expect(await upgradeZonelessViews(opened(), clock)).toEqual([]);
        expect(await startUpAudits()).toBe(1);
      },
    );

    it(
      'a start after one that left no view of the old form reads one row, not the certified views',
      needs(engine.skip),
      async () => {
        await publishedTheOldWay();
        expect(await upgradeZonelessViews(opened(), clock)).toEqual([view]);
        // Every later start: one statement, whatever the number of certified views (reading them all took
        // 0.7-1.0 s on PostgreSQL and 2.2-3.0 s on PGlite at 5,000 among 100,000 tables).
        const { db, statements } = counted(opened());
        expect(await upgradeZonelessViews(db, clock)).toEqual([]);
        expect(statements).toHaveLength(1);
      },
    );

    it('a table no longer certified keeps its view as it is', needs(engine.skip), async () => {
      await publishedTheOldWay();
      await opened().query(`UPDATE gds.tables SET state = 'QUARANTINED' WHERE id = $1`, [contacts.id]);
      try {
        expect(await upgradeZonelessViews(opened(), clock)).toEqual([]);
        expect((await readIn('America/New_York', quoted())).map((r) => r.seen)).toContain(
          '2026-03-01T15:00:00Z',
        );
      } finally {
        await opened().query(`UPDATE gds.tables SET state = 'CERTIFIED' WHERE id = $1`, [contacts.id]);
      }
    });

    it(
      'a view PostgreSQL will not replace is given up, named on a line and audited, and the task ends',
      needs(engine.skip),
      async () => {
        // The old form, its column made a timestamp without a zone by hand: today's form (timestamptz) cannot
        // replace it in place.
        await opened().exec(
          `DROP VIEW IF EXISTS public.contacts_seen;
           DROP VIEW ${quoted()};
           CREATE VIEW ${quoted()} AS SELECT id, (data->>'seen_at')::timestamp AS seen_at
             FROM gds.records WHERE table_id = '${contacts.id}';
           INSERT INTO gds.start_up_tasks (name) VALUES ('zoneless_certified_views') ON CONFLICT DO NOTHING;`,
        );
        try {
          const warnings: string[] = [];
          expect(await upgradeZonelessViews(opened(), clock, 5_000, (line) => warnings.push(line))).toEqual(
            [],
          );
          expect(warnings).toEqual([
            expect.stringContaining(`certified view ${view} of table ${contacts.id}: given up`),
          ]);
          const [audit] = await opened().query<{ details: Record<string, unknown> }>(
            `SELECT details FROM gds.audit_log WHERE table_id = $1 AND action = 'CERTIFIED_VIEW_REPUBLISH_GIVEN_UP'`,
            [contacts.id],
          );
          expect(audit?.details).toMatchObject({ view, via: 'start-up' });
          // The task ended: the next start reads its row only, and finds none.
          expect(await opened().query(`SELECT name FROM gds.start_up_tasks`)).toEqual([]);
          const { db, statements } = counted(opened());
          expect(await upgradeZonelessViews(db, clock)).toEqual([]);
          expect(statements).toHaveLength(1);
        } finally {
          // Today's form again, for the tests after this one.
          await opened().exec(`DROP VIEW ${quoted()}`);
          view = await opened().transaction((tx) => publishCertifiedView(tx, contacts));
        }
      },
    );

    it(
      'replaced many at once; a view of the batch PostgreSQL will not replace leaves the others replaced',
      needs(engine.skip),
      async () => {
        // legacy_leads (Mode B, the seed's soft-deleted one) active again, certified with a timestamp column and a view of the old form beside crm_contacts'
        // unreplaceable one: one transaction fails, and each is then tried alone.
        const [leads] = await opened().query<{ id: string }>(
          `UPDATE gds.tables SET state = 'CERTIFIED', active = true,
                  columns = '[{"name": "seen_at", "type": "timestamp", "required": false}]'
            WHERE name = 'legacy_leads' AND workspace_id = $1 RETURNING id`,
          [contacts.workspaceId],
        );
        const leadsView = view.replace(/\.[^.]+$/, '.legacy_leads');
        const quotedLeads = leadsView.split('.').map(quoteIdent).join('.');
        await opened().exec(
          `DROP VIEW IF EXISTS public.contacts_seen;
           DROP VIEW ${quoted()};
           CREATE VIEW ${quoted()} AS SELECT id, (data->>'seen_at')::timestamp AS seen_at
             FROM gds.records WHERE table_id = '${contacts.id}';
           DROP VIEW IF EXISTS ${quotedLeads};
           CREATE VIEW ${quotedLeads} AS SELECT id, (data->>'seen_at')::timestamptz AS seen_at
             FROM gds.records WHERE table_id = '${leads?.id ?? ''}';
           INSERT INTO gds.start_up_tasks (name) VALUES ('zoneless_certified_views') ON CONFLICT DO NOTHING;`,
        );
        try {
          const warnings: string[] = [];
          expect(await upgradeZonelessViews(opened(), clock, 5_000, (line) => warnings.push(line))).toEqual([
            leadsView,
          ]);
          expect(warnings).toEqual([
            expect.stringContaining(`certified view ${view} of table ${contacts.id}: given up`),
          ]);
          expect(await opened().query(`SELECT name FROM gds.start_up_tasks`)).toEqual([]);
        } finally {
          await opened().exec(`DROP VIEW ${quoted()}; DROP VIEW ${quotedLeads}`);
          await opened().query(`UPDATE gds.tables SET state = 'QUARANTINED' WHERE id = $1`, [
            leads?.id ?? '',
          ]);
          view = await opened().transaction((tx) => publishCertifiedView(tx, contacts));
        }
      },
    );

    // Failures a later start may not meet (a role not yet granted the view, a full disk, memory or connections
    // short, an I/O error, the server's own error): giving the view up on them would leave a certified view
    // stale for good, said only on one start's stderr.
    it.each([
      ['42501', 'must be owner of view'],
      ['53100', 'could not extend file: No space left on device'],
      ['53200', 'out of memory'],
      ['53300', 'too many connections for role'],
      ['58030', 'could not read block'],
      ['XX000', 'cache lookup failed'],
    ])(
      'a replacement failing with %s (%s) is left for the next start, not given up',
      needs(engine.skip),
      async (code, message) => {
        await publishedTheOldWay();
        const givenUp = async () =>
          (
            await opened().query<{ n: number }>(
              `SELECT count(*)::int AS n FROM gds.audit_log
                WHERE table_id = $1 AND action = 'CERTIFIED_VIEW_REPUBLISH_GIVEN_UP'`,
              [contacts.id],
            )
          )[0]?.n;
        const before = await givenUp();
        const warnings: string[] = [];
        const failing = failingReplacement(opened(), code, message);
        expect(await upgradeZonelessViews(failing, clock, 5_000, (line) => warnings.push(line))).toEqual([]);
        expect(warnings).toEqual([
          expect.stringMatching(
            `^certified view of table ${contacts.id}: not republished .*\\(${message}\\)`,
          ),
        ]);
        expect(await givenUp()).toBe(before);
        expect(await opened().query(`SELECT name FROM gds.start_up_tasks`)).toEqual([
          { name: 'zoneless_certified_views' },
        ]);
        // Once the cause is gone, the next start replaces it.
        expect(await upgradeZonelessViews(opened(), clock)).toEqual([view]);
      },
    );

    // PGlite has one connection: no other session can hold the view there.
    if (engine.postgres)
      it(
        'a view held by a long read is left for the next start, said on the warning, and the start goes on',
        needs(engine.skip),
        async () => {
          await publishedTheOldWay();
          // Another session of the same database, holding the view as a long read would.
          const [database] = await opened().query<{ name: string }>('SELECT current_database() AS name');
          const url = new URL(process.env.GDS_TEST_DATABASE_URL ?? '');
          url.pathname = `/${database?.name ?? ''}`;
          const reader = new pg.Client({ connectionString: url.toString() });
          await reader.connect();
          try {
            await reader.query('BEGIN');
            await reader.query(`SELECT count(*) FROM ${quoted()}`);
            const warnings: string[] = [];
            expect(await upgradeZonelessViews(opened(), clock, 200, (line) => warnings.push(line))).toEqual(
              [],
            );
            expect(warnings).toEqual([
              expect.stringContaining(`certified view of table ${contacts.id}: not republished`),
            ]);
          } finally {
            await reader.query('ROLLBACK');
            await reader.end();
          }
          expect(await upgradeZonelessViews(opened(), clock)).toEqual([view]);
        },
      );
  },
);

/** The migration that files the start's task of replacing the certified views of the old form. */
const ZONELESS_VIEWS_MIGRATION =
  MIGRATIONS.find((m) => m.sql.includes('zoneless_certified_views'))?.name ?? 'no such migration yet';

describe.each(ENGINES)('the server’s start on $engine', (engine) => {
  it(
    'replaces a certified view of the old form, and says so in the audit log',
    needs(engine.skip),
    async () => {
      const { start, remove } = await oneDatabase(engine.postgres);
      try {
        const first = await start();
        const [table] = await first.db.query<{ id: string }>(
          `UPDATE gds.tables SET columns = '[{"name": "seen_at", "type": "timestamp", "required": false}]'
            WHERE name = 'crm_contacts' AND active RETURNING id`,
        );
        const id = table?.id ?? fail('no crm_contacts');
        await first.db.query(
          `UPDATE gds.records SET data = data || '{"seen_at": "2026-03-01T10:00:00"}' WHERE table_id = $1`,
          [id],
        );
        // The database as an earlier server left it: the view of the old form, and no migration of this one's
        // since (the migration that files the start's task to replace it).
        await first.db.exec(
          `DROP VIEW certified_dev.crm_contacts;
           CREATE VIEW certified_dev.crm_contacts AS
             SELECT id, (data->>'seen_at')::timestamptz AS seen_at FROM gds.records WHERE table_id = '${id}';
           DROP TABLE gds.start_up_tasks;
           DELETE FROM gds.schema_migrations WHERE name = '${ZONELESS_VIEWS_MIGRATION}'`,
        );
        await first.close();

        const second = await start();
        try {
          // Its definition now holds the zone test (the tests above read it in other zones), and the audit
          // log says the start replaced it.
          const [view] = await second.db.query<{ zoned: boolean }>(
            `SELECT strpos(pg_get_viewdef('certified_dev.crm_contacts'::regclass), '[^0-9:. T]') > 0 AS zoned`,
          );
          expect(view?.zoned).toBe(true);
          const audits = await second.db.query<{ details: Record<string, unknown> }>(
            `SELECT details FROM gds.audit_log WHERE table_id = $1 AND action = 'CERTIFIED_VIEW_REPUBLISHED'`,
            [id],
          );
          expect(audits.map((a) => a.details)).toEqual([
            expect.objectContaining({ view: 'certified_dev.crm_contacts', via: 'start-up' }),
          ]);
        } finally {
          await second.close();
        }
      } finally {
        await remove();
      }
    },
  );
});

/** `db`, with every statement run through it (in its transactions too) listed in `statements`. */
function counted(db: Db): { db: Db; statements: string[] } {
  const statements: string[] = [];
  const through = (q: Queryable): Queryable => ({
    query: (sql, params) => {
      statements.push(sql);
      return q.query(sql, params);
    },
    exec: (sql) => {
      statements.push(sql);
      return q.exec(sql);
    },
  });
  return {
    db: { ...db, ...through(db), transaction: (fn) => db.transaction((tx) => fn(through(tx))) },
    statements,
  };
}

/** `db`, whose replacement of a view fails as PostgreSQL would with `code` (its SQLSTATE) and `message`. */
function failingReplacement(db: Db, code: string, message: string): Db {
  const through = (q: Queryable): Queryable => ({
    query: (sql, params) => q.query(sql, params),
    exec: (sql) =>
      sql.includes('CREATE OR REPLACE VIEW')
        ? Promise.reject(Object.assign(new Error(message), { code }))
        : q.exec(sql),
  });
  return { ...db, ...through(db), transaction: (fn) => db.transaction((tx) => fn(through(tx))) };
}

function fail(message: string): never {
  throw new Error(message);
}
