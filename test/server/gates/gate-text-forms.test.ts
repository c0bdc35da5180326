// Certify compares a digest of the rows the checks read, taken in the gate's transaction and again in its own:
// each row is hashed as text, which prints dates, timestamps, intervals, floats and bytea as the session's
// settings say. A database whose defaults change in between (ALTER DATABASE … SET, a new connection of the
// pool picking them up; on PGlite the session's) must not make unchanged rows read as changed. The gates also
// read every value and date literal with PostgreSQL's defaults whatever the database's, so a check has one
// answer everywhere.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../../src/server/db/handle.js';
import { openDb } from '../../../src/server/db/index.js';
import { runGate1, runGate1WithDigest } from '../../../src/server/gates/gate1-runner.js';
import { rowsChangedSince } from '../../../src/server/gates/snapshot.js';
import type { GateTable } from '../../../src/server/gates/table.js';
import { quoteSource } from '../../../src/server/warehouse.js';
import { ENGINES } from '../../helpers/engines.js';
import { scratchDir } from '../../helpers/migrated-database.js';
import { createPostgresDatabase } from '../../helpers/server.js';
import { needs } from '../../helpers/skip.js';
import { seededGateTables } from './seeded-gate-tables.js';

/** A locale other than C that prints money, to_char's separators and month names otherwise (.ci/run makes it). */
const OTHER_LOCALE = 'de_DE.UTF-8';

/** Settings a database may default to that print a value otherwise than PostgreSQL's defaults do. */
const OTHER_DEFAULTS: Array<[name: string, value: string]> = [
  ['DateStyle', 'SQL, DMY'],
  ['IntervalStyle', 'sql_standard'],
  ['extra_float_digits', '0'],
  ['bytea_output', 'escape'],
  ['lc_monetary', OTHER_LOCALE],
  ['lc_numeric', OTHER_LOCALE],
  ['lc_time', OTHER_LOCALE],
];

/** Each passes read with PostgreSQL's defaults, and fails under one of OTHER_DEFAULTS. */
const TEXT_RULES = `customPredicates:
  - name: a_date_prints_iso
    sql: "'2024-02-01'::date::text = '2024-02-01'"
    severity: HARD_FAIL
  - name: a_slashed_date_reads_month_first
    sql: "'01/02/2026'::date = '2026-01-02'::date"
    severity: HARD_FAIL
  - name: an_interval_prints_as_postgres
    sql: "'1 day 02:03:04'::interval::text = '1 day 02:03:04'"
    severity: HARD_FAIL
  - name: a_float_prints_every_digit_it_needs
    sql: "(0.1::double precision + 0.2::double precision)::text = '0.30000000000000004'"
    severity: HARD_FAIL
  - name: a_currency_symbol_is_c_s_none
    sql: "trim(to_char(1234.5, 'L9999D9')) = '1234.5'"
    severity: HARD_FAIL
  - name: a_number_groups_thousands_by_commas
    sql: "to_char(1234.5, 'FM9G999D9') = '1,234.5'"
    severity: HARD_FAIL
  - name: a_month_is_named_in_english
    sql: "to_char('2024-03-01'::date, 'TMMonth') = 'March'"
    severity: HARD_FAIL
  - name: signed_up_from_mid_january
    sql: "signup_date IS NULL OR signup_date >= '2024-01-15'::date"
    severity: HARD_FAIL
`;

const TEXT_RULE_NAMES = [...TEXT_RULES.matchAll(/name: (a\w+)/g)].map((m) => m[1] ?? '');

describe.each(ENGINES)('the gates’ text forms on $engine', (engine) => {
  let db: Db | undefined;
  let url: string | undefined;
  let drop: (() => Promise<void>) | undefined;
  let customers: GateTable;
  let contacts: GateTable;
  /** Why the PostgreSQL server cannot be set to OTHER_LOCALE, or undefined when it can. */
  let noOtherLocale: string | undefined;

  beforeAll(async () => {
    if (engine.skip !== undefined) return;
    if (engine.postgres) {
      ({ url, drop } = await createPostgresDatabase());
      db = await openDb({ databaseUrl: url });
    } else {
      db = await openDb({ scratchDir: await scratchDir() });
    }
    ({ customers, contacts } = await seededGateTables(db, TEXT_RULES));
    // Values of every kind whose text a setting changes, in the customers' warehouse rows the digest reads.
    await db.exec(
      `ALTER TABLE ${quoteSource(customers.source ?? fail('customers has no source'))}
         ADD COLUMN stay interval DEFAULT '1 day 02:03:04', ADD COLUMN score double precision DEFAULT 0.30000000000000004,
         ADD COLUMN blob bytea DEFAULT '\\x00ff', ADD COLUMN seen_at timestamp DEFAULT '2024-02-01 10:00',
         ADD COLUMN price money DEFAULT 1234.5`,
    );
    if (url) noOtherLocale = await whyNoLocale(url, OTHER_LOCALE);
  });

  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  const opened = () => db ?? fail('the database was not opened');

  /**
   * Runs `during` on a database handle whose transactions start with `name` at `value`: on PGlite the one
   * session, set so; on PostgreSQL a handle opened after the database was set so, each of whose transactions
   * starts with SET LOCAL too: the server's connections set DateStyle, IntervalStyle and extra_float_digits
   * themselves (db/index.ts), so the database's default no longer reaches them, but a connection that never ran
   * that SET (a pooler's server connection) has it.
   */
  async function withDefault<T>(
    skip: (note: string) => never,
    name: string,
    value: string,
    during: (db: Db) => Promise<T>,
  ): Promise<T> {
    if (value === OTHER_LOCALE && noOtherLocale !== undefined) skip(noOtherLocale);
    if (!url) {
      await opened().exec(`SET ${name} = '${value}'`);
      try {
        return await during(opened());
      } finally {
        await opened().exec(`RESET ${name}`);
      }
    }
    const databaseName = new URL(url).pathname.slice(1);
    await alterDatabase(url, `ALTER DATABASE "${databaseName}" SET ${name} = '${value}'`);
    const other = await openDb({ databaseUrl: url });
    const set: Db = {
      ...other,
      transaction: (fn) =>
        other.transaction(async (tx) => {
          await tx.exec(`SET LOCAL ${name} = '${value}'`);
          return fn(tx);
        }),
    };
    try {
      return await during(set);
    } finally {
      await other.close();
      await alterDatabase(url, `ALTER DATABASE "${databaseName}" RESET ${name}`);
    }
  }

  /**
   * Whether certify, in a transaction of `q`, finds `table`'s rows changed, and the setting after it (rowsDigest
   * sets it back as the transaction started with it).
   */
  const certifyReads = (q: Db, name: string, table: GateTable, digest: string) =>
    q.transaction(async (tx) => {
      const changed = await rowsChangedSince(tx, table, digest);
      const [row] = await tx.query<{ value: string }>('SELECT current_setting($1) AS value', [name]);
      return { changed, setting: row?.value };
    });

  it.for(OTHER_DEFAULTS)(
    'certify finds the rows unchanged when the database’s %s became %s after the checks',
    needs(engine.skip),
    async ([name, value], { skip }) => {
      for (const table of [customers, contacts]) {
        const { rowsDigest } = await runGate1WithDigest(opened(), table, { clock: Date.now });
        const seen = await withDefault(skip, name, value, (other) =>
          certifyReads(other, name, table, rowsDigest),
        );
        expect({ table: table.name, ...seen }).toEqual({ table: table.name, changed: false, setting: value });
      }
    },
  );

  it.for(OTHER_DEFAULTS)(
    'the checks read values as PostgreSQL’s defaults print them when the database’s %s is %s',
    needs(engine.skip),
    async ([name, value], { skip }) => {
      const proof = await withDefault(skip, name, value, (other) =>
        runGate1(other, customers, { clock: Date.now }),
      );
      const ours = proof.results.filter((r) => TEXT_RULE_NAMES.includes(r.name));
      expect(ours.map((r) => ({ name: r.name, passed: r.passed }))).toEqual(
        TEXT_RULE_NAMES.map((name) => ({ name, passed: true })),
      );
    },
  );

  // PGlite runs the checks on a copy of the rows in its sandbox, written out as text and read back there: a
  // date printed day first (01/12/2024) and read month first would be 12 January.
  it(
    'the checks read each date as stored when the database prints dates day first',
    needs(engine.skip),
    async ({ skip }) => {
      await opened().exec(
        `UPDATE ${quoteSource(customers.source ?? '')} SET signup_date = '2024-12-01' WHERE signup_date IS NOT NULL`,
      );
      const proof = await withDefault(skip, 'DateStyle', 'SQL, DMY', (other) =>
        runGate1(other, customers, { clock: Date.now }),
      );
      expect(proof.results.find((r) => r.name === 'signed_up_from_mid_january')).toMatchObject({
        passed: true,
        failingRows: 0,
      });
    },
  );
});

async function alterDatabase(url: string, sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/** Why the server at `url` cannot set lc_monetary to `locale` (not installed where it runs), or undefined. */
async function whyNoLocale(url: string, locale: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`SET lc_monetary = '${locale}'`);
    return undefined;
  } catch (error) {
    return `the PostgreSQL server has no locale ${locale} (${error instanceof Error ? error.message : String(error)}; .ci/run makes it with localedef)`;
  } finally {
    await client.end();
  }
}

function fail(message: string): never {
  throw new Error(message);
}
