// A Gate 1 submission's scan can outlast a proxy's timeout, and the client then sends it again with the same
// Idempotency-Key while the first still scans. The retry waits for the first's answer instead of scanning the
// table a second time beside it (src/server/idempotency.ts, whileInFlight); it takes over when the first failed
// or its server stopped refreshing the mark, and is refused with 503 and Retry-After when the first outlasts
// its wait. The scan (runGate1) is held by the test to stand for a long one. On PGlite and PostgreSQL.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Gate1Proof } from '../../../src/server/gates/gate1-runner.js';
import type * as runner from '../../../src/server/gates/gate1-runner.js';
import { HttpError } from '../../../src/server/errors.js';
import { IN_FLIGHT_STALE_MS, IN_FLIGHT_WAIT_MS } from '../../../src/server/idempotency.js';
import { ENGINES } from '../../helpers/engines.js';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';
import { needs } from '../../helpers/skip.js';

/** Scans the test holds: each call waits for `release` (or `fail`) of its own. */
const held = vi.hoisted(() => ({
  hold: false,
  calls: 0,
  started: [] as Array<{ release: () => void; fail: (error: Error) => void }>,
}));

vi.mock('../../../src/server/gates/gate1-runner.js', async (importOriginal) => {
  const original = await importOriginal<typeof runner>();
  return {
    ...original,
    runGate1: async (...args: Parameters<typeof original.runGate1>): Promise<Gate1Proof> => {
      held.calls += 1;
      if (held.hold) {
        await new Promise<void>((resolve, reject) => {
          held.started.push({ release: resolve, fail: reject });
        });
      }
      return original.runGate1(...args);
    },
  };
});

/** Waits until `count` scans are held (the test's own pace: no deadline but the test's). */
async function scansHeld(count: number) {
  while (held.started.length < count) await sleep(10);
}

/** Scans from now on wait to be released; the count of scans starts again. */
function holdScans() {
  held.hold = true;
  held.calls = 0;
}

/** Lets the oldest held scan go on, and the scans after it run at once. */
function releaseScan() {
  held.hold = false;
  held.started.shift()?.release();
}

/** Gives a retry time to reach the scan (it waits for the first's answer instead, so none starts). */
async function secondScanGiven() {
  for (let i = 0; i < 20 && held.calls < 2; i += 1) await sleep(50);
}

describe.each(ENGINES)('a submission sent again while its scan runs, on $engine', ({ postgres, skip }) => {
  describe('one scan per Idempotency-Key at a time', needs(skip), () => {
    let server: TestServer;

    beforeAll(async () => {
      server = await startTestServer({ jobs: 'manual', ...(postgres ? { database: 'postgres' } : {}) });
    });

    // A test that failed with scans still held lets them go, so the next test starts clear.
    afterEach(() => {
      held.hold = false;
      for (const scan of held.started.splice(0)) scan.release();
      server.clock.reset();
    });

    afterAll(async () => {
      await server?.close();
    });

    const submit = (tableId: string, key: string) =>
      server.request('POST', `/api/tables/${tableId}/gate-submissions`, {
        token: server.user('STEWARD').accessToken,
        body: {},
        headers: { 'idempotency-key': key },
      });

    const submitted = async (tableId: string) => {
      const [row] = await server.sql<{ proofs: number; notified: number; marks: number }>(
        `SELECT (SELECT count(*)::int FROM gds.gate_proofs WHERE table_id = $1 AND kind = 'submit') AS proofs,
                (SELECT count(*)::int FROM gds.notifications WHERE table_id = $1) AS notified,
                (SELECT count(*)::int FROM gds.gate_submission_scans) AS marks`,
        [tableId],
      );
      return row;
    };

    it('a retry while the first attempt scans waits for its answer: one scan, one proof, one notification', async () => {
      // The retry's wait (IN_FLIGHT_WAIT_MS) is of the server's clock: stopped, a slow scan never outlasts it.
      server.clock.freeze();
      const orders = server.table('orders').id;
      const before = await submitted(orders);
      holdScans();
      const first = submit(orders, 'ci-77-orders');
      await scansHeld(1);
      const retry = submit(orders, 'ci-77-orders');
      await secondScanGiven();
      expect(held.calls).toBe(1);
      releaseScan();
      const [a, b] = await Promise.all([first, retry]);
      expect([a.status, b.status]).toEqual([201, 201]);
      expect(b.body).toEqual(a.body);
      expect(a.headers.get('idempotent-replayed')).toBeNull();
      expect(b.headers.get('idempotent-replayed')).toBe('true');
      expect(held.calls).toBe(1);
      expect(await submitted(orders)).toEqual({
        proofs: (before?.proofs ?? 0) + 1,
        notified: (before?.notified ?? 0) + 1,
        marks: 0,
      });
    });

    it('the first attempt failed during its scan: the retry waiting for it scans itself and submits once', async () => {
      // The retry's wait (IN_FLIGHT_WAIT_MS) is of the server's clock: stopped, a slow scan never outlasts it.
      server.clock.freeze();
      const customers = server.table('customers').id;
      const before = await submitted(customers);
      holdScans();
      const first = submit(customers, 'ci-78-customers');
      await scansHeld(1);
      const retry = submit(customers, 'ci-78-customers');
      await secondScanGiven();
      expect(held.calls).toBe(1);
      held.started
        .shift()
        ?.fail(
          new HttpError(409, 'table_changed', 'The table changed during the scan; nothing was submitted.'),
        );
      const a = await first;
      expect(a.status).toBe(409);
      // The retry took the mark the first left and scans now (held again: released here).
      await scansHeld(1);
      releaseScan();
      const b = await retry;
      expect(b.status, JSON.stringify(b.body)).toBe(201);
      expect(b.headers.get('idempotent-replayed')).toBeNull();
      expect(held.calls).toBe(2);
      expect(await submitted(customers)).toEqual({
        proofs: (before?.proofs ?? 0) + 1,
        notified: (before?.notified ?? 0) + 1,
        marks: 0,
      });
    });

    it('a mark its server stopped refreshing is taken over: the submission scans and lands', async () => {
      const orders = server.table('orders').id;
      const before = await submitted(orders);
      const workspaceId = server.ready.workspaces[0]?.workspaceId;
      const stoppedAt = new Date(server.clock.now() - IN_FLIGHT_STALE_MS - 1_000).toISOString();
      await server.sql(
        `INSERT INTO gds.gate_submission_scans (workspace_id, key, request_hash, holder, heartbeat_at)
         VALUES ($1, 'ci-79-orders', 'a request of a server that stopped', 'gone', $2)`,
        [workspaceId, stoppedAt],
      );
      held.calls = 0;
      const r = await submit(orders, 'ci-79-orders');
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      expect(held.calls).toBe(1);
      expect(await submitted(orders)).toEqual({
        proofs: (before?.proofs ?? 0) + 1,
        notified: (before?.notified ?? 0) + 1,
        marks: 0,
      });
    });

    it('a first attempt still scanning past the wait: 503 request_in_progress with Retry-After, nothing done', async () => {
      const orders = server.table('orders').id;
      const workspaceId = server.ready.workspaces[0]?.workspaceId;
      const hash = await heldHashFor(orders, 'ci-80-orders');
      const before = await submitted(orders);
      await server.sql(
        `INSERT INTO gds.gate_submission_scans (workspace_id, key, request_hash, holder, heartbeat_at)
         VALUES ($1, 'ci-80-orders', $2, 'another process', $3)`,
        [workspaceId, hash, new Date(server.clock.now()).toISOString()],
      );
      held.calls = 0;
      let settled = false;
      const waiting = submit(orders, 'ci-80-orders').finally(() => {
        settled = true;
      });
      // The holder keeps its mark fresh while the server's time passes the wait.
      while (!settled) {
        server.clock.advance(1_000);
        await server.sql(
          `UPDATE gds.gate_submission_scans SET heartbeat_at = $1 WHERE key = 'ci-80-orders'`,
          [new Date(server.clock.now()).toISOString()],
        );
        await sleep(20);
      }
      const r = await waiting;
      expect(r.status).toBe(503);
      expect(r.body.error.code).toBe('request_in_progress');
      expect(r.body.error.message).toContain('Send it again with the same key');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(held.calls).toBe(0);
      await server.sql(`DELETE FROM gds.gate_submission_scans WHERE key = 'ci-80-orders'`);
      expect(await submitted(orders)).toEqual({ ...before, marks: 0 });
      expect(IN_FLIGHT_WAIT_MS).toBeLessThan(60_000);
    });

    it('the key at work for another request: 422 idempotency_key_reused at once', async () => {
      const customers = server.table('customers').id;
      holdScans();
      const first = submit(server.table('orders').id, 'ci-81');
      await scansHeld(1);
      const other = await submit(customers, 'ci-81');
      expect(other.status).toBe(422);
      expect(other.body.error.code).toBe('idempotency_key_reused');
      releaseScan();
      expect((await first).status).toBe(201);
      expect(held.calls).toBe(1);
    });

    /** The request hash the server binds a steward's plain submission of `tableId` with `key` to: read from the
     *  key the submission stores (submitted once under a throwaway key, then the same request's hash). */
    async function heldHashFor(tableId: string, key: string) {
      const probe = `${key}-probe`;
      const r = await submit(tableId, probe);
      expect(r.status).toBe(201);
      const [row] = await server.sql<{ request_hash: string }>(
        'SELECT request_hash FROM gds.gate_submission_keys WHERE key = $1',
        [probe],
      );
      return row?.request_hash;
    }
  });
});
