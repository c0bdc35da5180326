// On PGlite, a sampled Gate 1 run draws the sample in the service's database and loads
// only the sample into the sandbox its checks run in; the table's own rows are neither copied nor loaded
// (a full run loads them all). What each sample finds is what the same sample finds checked in place.
// The sandbox is watched by wrapping the database's: every COPY of copied rows is counted per table.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db, Queryable } from '../../../src/server/db/handle.js';
import { openDb } from '../../../src/server/db/index.js';
import { scratchDir } from '../../helpers/migrated-database.js';
import { migrate } from '../../../src/server/db/migrations.js';
import { seedIfEmpty } from '../../../src/server/seed.js';
import type { Gate1Proof } from '../../../src/server/gates/gate1-runner.js';
import { runGate1 } from '../../../src/server/gates/gate1-runner.js';
import { parseSample } from '../../../src/server/gates/sample.js';
import type { GateTable } from '../../../src/server/gates/table.js';
import { loadGateTable } from '../../../src/server/gates/table.js';

const EXTRA_ROWS = 3000;

let db: Db;
let table: GateTable;
/** Rows loaded into a sandbox per table, since the last reset. */
let loaded = new Map<string, number>();

/** `q` with every copy it loads (COPY … FROM, one line a row) counted in `loaded`. */
function counting(q: Queryable): Queryable {
  return {
    query: (sql, params) => q.query(sql, params),
    exec: (sql) => q.exec(sql),
    copyIn: async (table, data) => {
      const into = table.replaceAll('"', '');
      const rows = new TextDecoder().decode(data).split('\n').length - 1;
      loaded.set(into, (loaded.get(into) ?? 0) + rows);
      if (!q.copyIn) throw new Error('the sandbox has no COPY FROM');
      return q.copyIn(table, data);
    },
  };
}

/** The database with its sandboxes watched (`sandboxed`), or with none, so checks run in place. */
function view(sandboxed: boolean): Db {
  return new Proxy(db, {
    get(target, property) {
      if (property === 'sandbox') {
        if (!sandboxed) return undefined;
        return <T>(fn: (sandbox: Db) => Promise<T>) =>
          target.sandbox?.((sandbox) =>
            fn(
              new Proxy(sandbox, {
                get(inner, key) {
                  if (key === 'transaction') {
                    return <R>(work: (tx: Queryable) => Promise<R>) =>
                      inner.transaction((tx) => work(counting(tx)));
                  }
                  const value: unknown = Reflect.get(inner, key, inner);
                  return typeof value === 'function' ? value.bind(inner) : value;
                },
              }),
            ),
          );
      }
      // The gate queue would hand the checks the database itself, unwatched (gate-queue.test.ts tests it).
      if (property === 'gateWork') return undefined;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

const run = (sandboxed: boolean, sample?: string): Promise<Gate1Proof> =>
  runGate1(view(sandboxed), table, {
    clock: Date.now,
    ...(sample === undefined ? {} : { sample: parseSample(sample) }),
  });

/** What a proof found, without when it ran or how the rows were read. */
const findings = (proof: Gate1Proof) =>
  proof.results.map((r) => ({ name: r.name, passed: r.passed, failingRows: r.failingRows }));

beforeAll(async () => {
  db = await openDb({ scratchDir: await scratchDir() });
  await migrate(db);
  await seedIfEmpty(db, Date.now);
  const [orders] = await db.query<{ id: string; workspace_id: string }>(
    `SELECT id, workspace_id FROM gds.tables WHERE name = 'orders' AND active ORDER BY created_at LIMIT 1`,
  );
  if (!orders) throw new Error('no seeded orders table');
  await db.query(
    `INSERT INTO analytics_dev.orders
     SELECT 'x' || g, 50000 + g, 1001 + g % 10, (g % 500)::numeric - 3, 'SHIPPED', date '2024-01-01' + g % 365
       FROM generate_series(1, $1::int) AS g`,
    [EXTRA_ROWS],
  );
  await db.query('ANALYZE analytics_dev.orders');
  table = await loadGateTable(db, orders.workspace_id, orders.id);
});

afterAll(async () => {
  await db?.close();
});

describe('a sampled gate run on PGlite', () => {
  it('a full run loads every row of the table into the sandbox', async () => {
    loaded = new Map();
    const proof = await run(true);
    expect(proof.rowsChecked).toBeGreaterThan(EXTRA_ROWS);
    expect(loaded.get('analytics_dev.orders')).toBe(proof.rowsChecked);
  });

  it.each(['head:7', 'tail:7', 'chunks:3@4', 'random:9'])(
    '%s loads the sample alone, and finds what the same sample finds in place',
    async (spec) => {
      loaded = new Map();
      const sampled = await run(true, spec);
      const size = parseSample(spec).rows * (spec.startsWith('chunks') ? 3 : 1);
      expect(sampled.rowsChecked).toBe(size);
      expect(loaded.get('gds_sandbox_rows.sample')).toBe(size);
      expect(loaded.get('analytics_dev.orders') ?? 0).toBe(0);
      expect(sampled.sample?.method).toEqual(expect.any(String));
      if (spec.startsWith('random')) return; // a seed per run: another draw in place
      const inPlace = await run(false, spec);
      expect(inPlace.sample?.method).toBe(sampled.sample?.method);
      expect(findings(sampled)).toEqual(findings(inPlace));
    },
  );
});
