// updateContract compares the live contract's fields with the ones it writes to decide whether the contract
// revision (gds.tables.contract_version) moves. It locks the contract row before it compares, whatever lock its
// caller holds: two writes in parallel compare in turn. Without it, a write that puts back the fields another
// write is changing read the old fields, found "no change" and overwrote the other's without a bump: a review
// proof taken at the other's fields stayed fresh on a contract it never checked. PostgreSQL only (PGlite runs
// one transaction at a time).
import { describe, expect, it, vi } from 'vitest';
import type { ContractFields } from '../../../src/server/certification/contracts.js';
import { fieldsOf, liveContract, updateContract } from '../../../src/server/certification/contracts.js';
import { migrate } from '../../../src/server/db/migrations.js';
import { ENGINES, useEngineDb } from '../../helpers/engines.js';
import { needs } from '../../helpers/skip.js';
import { schemaBefore, T0 } from './earlier-schema.js';

const clock = () => Date.parse(T0);
const TABLE = { id: 'tbl_a', grain: 'one row per order', grainKeyColumns: ['order_id'] };
const postgres = ENGINES.filter((e) => e.postgres);

describe.each(postgres)('two contract writes in parallel ($engine)', (engine) => {
  let initial: ContractFields;
  const db = useEngineDb(engine, async (opened) => {
    // The workspace ws_a and its user usr_a, on the whole schema.
    await schemaBefore(opened, Number.MAX_SAFE_INTEGER);
    await migrate(opened);
    await opened.query(
      `INSERT INTO gds.tables (id, workspace_id, slug, name, mode, state, gate_mode, environment_label, owner_id,
                               columns, created_at, updated_at)
       VALUES ('tbl_a', 'ws_a', 'a', 'a', 'MODE_A', 'PENDING_REVIEW', 'ENFORCING', 'dev', 'usr_a', '[]', $1, $1)`,
      [T0],
    );
    initial = fieldsOf(await opened.transaction((tx) => liveContract(tx, clock, TABLE)));
  });

  const version = async () =>
    Number(
      (await db().query<{ v: number }>(`SELECT contract_version AS v FROM gds.tables WHERE id = 'tbl_a'`))[0]
        ?.v,
    );
  const waitingOnALock = async () =>
    Number(
      (
        await db().query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock'`,
        )
      )[0]?.n,
    );

  it(
    'a write putting back the fields another is changing waits for it, and both bump the revision',
    needs(engine.skip),
    async () => {
      const start = await version();
      let release = () => {};
      const held = new Promise<void>((resolve) => (release = resolve));
      let wrote = () => {};
      const first = new Promise<void>((resolve) => (wrote = resolve));
      const changing = db().transaction(async (tx) => {
        await updateContract(tx, clock, TABLE.id, { ...initial, meaning: 'Orders, changed' }, 'usr_a');
        wrote();
        await held;
      });
      await first;
      const puttingBack = db().transaction((tx) => updateContract(tx, clock, TABLE.id, initial, 'usr_a'));
      // The second write is blocked on the first's row lock before the first commits.
      await vi.waitFor(async () => expect(await waitingOnALock()).toBeGreaterThan(0), {
        timeout: 10_000,
        interval: 20,
      });
      release();
      await changing;
      const second = await puttingBack;
      expect(second.contractVersion).toEqual({ from: start + 1, to: start + 2 });
      expect(await version()).toBe(start + 2);
      const [row] = await db().query<{ meaning: string }>(
        `SELECT meaning FROM gds.contracts WHERE table_id = 'tbl_a'`,
      );
      expect(row?.meaning).toBe(initial.meaning);
    },
  );
});
