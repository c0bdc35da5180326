// The gates read the clock in UTC, whatever TimeZone the database is set to (here UTC+14: on PostgreSQL the
// database's own setting, which every connection of the server starts with; on PGlite the session's). A
// predicate such as `created_at::date = current_date` (a dbt `where:` reading the clock) then gives one
// answer on every engine and machine; before, it read the zone of the PostgreSQL the server ran against.
// Certify compares a digest of the rows the checks read, taken in the gate's transaction (UTC) and again in
// its own (the database's zone): the rows of a Mode B table hold timestamptz values, which must not make
// them "changed".
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../../src/server/db/handle.js';
import { openDb } from '../../../src/server/db/index.js';
import { runGate1, runGate1WithDigest } from '../../../src/server/gates/gate1-runner.js';
import { rowsChangedSince } from '../../../src/server/gates/snapshot.js';
import type { GateTable } from '../../../src/server/gates/table.js';
import { ENGINES } from '../../helpers/engines.js';
import { scratchDir } from '../../helpers/migrated-database.js';
import { createPostgresDatabase } from '../../helpers/server.js';
import { needs } from '../../helpers/skip.js';
import { seededGateTables } from './seeded-gate-tables.js';

/** UTC+14 all year (the POSIX sign is inverted): its date is UTC's next day from 10:00 UTC. */
const ZONE = 'Etc/GMT-14';

const CLOCK_RULES = `customPredicates:
  - name: an_instant_on_its_utc_day
    sql: "'2026-03-01 23:30:00+00'::timestamptz::date = '2026-03-01'::date"
    severity: HARD_FAIL
  - name: now_in_utc
    sql: "to_char(now(), 'OF') = '+00'"
    severity: HARD_FAIL
`;

async function openInZone(postgres: boolean): Promise<{ db: Db; drop?: () => Promise<void> }> {
  if (!postgres) {
    const db = await openDb({ scratchDir: await scratchDir() });
    await db.exec(`SET TimeZone = '${ZONE}'`);
    return { db };
  }
  const database = await createPostgresDatabase();
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  const name = new URL(database.url).pathname.slice(1);
  await admin.query(`ALTER DATABASE "${name}" SET TimeZone TO '${ZONE}'`);
  await admin.end();
  return { db: await openDb({ databaseUrl: database.url }), drop: database.drop };
}

describe.each(ENGINES)('the gates’ clock on $engine, whose database is at UTC+14', (engine) => {
  let db: Db | undefined;
  let drop: (() => Promise<void>) | undefined;
  let customers: GateTable;
  let contacts: GateTable;

  beforeAll(async () => {
    if (engine.skip !== undefined) return;
    ({ db, drop } = await openInZone(engine.postgres));
    ({ customers, contacts } = await seededGateTables(db, CLOCK_RULES));
  });

  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  const opened = () => db ?? fail('the database was not opened');
  /** The zone a transaction of the server's database starts in. */
  const zoneOfTransactions = () =>
    opened().transaction(async (tx) => {
      const [row] = await tx.query<{ zone: string }>(`SELECT current_setting('TimeZone') AS zone`);
      return row?.zone;
    });

  it('a predicate reading the clock reads it in UTC', needs(engine.skip), async () => {
    expect(await zoneOfTransactions()).toBe(ZONE);
    const proof = await runGate1(opened(), customers, { clock: Date.now });
    for (const name of ['an_instant_on_its_utc_day', 'now_in_utc'])
      expect(proof.results.find((r) => r.name === name)).toMatchObject({ passed: true, failingRows: 0 });
  });

  it(
    'certify finds the rows its checks read unchanged, and its own zone as it was',
    needs(engine.skip),
    async () => {
      const { rowsDigest } = await runGate1WithDigest(opened(), contacts, { clock: Date.now });
      const [changed, zone] = await opened().transaction(async (tx) => {
        const moved = await rowsChangedSince(tx, contacts, rowsDigest);
        const [row] = await tx.query<{ zone: string }>(`SELECT current_setting('TimeZone') AS zone`);
        return [moved, row?.zone];
      });
      expect(changed).toBe(false);
      expect(zone).toBe(ZONE);
    },
  );
});

function fail(message: string): never {
  throw new Error(message);
}
