// Gate work on the embedded database waits its turn in a bounded queue (db/gate-queue.ts): a request's work
// that finds the queue full, or cannot start within its deadline, is refused with 503 server_busy and a
// Retry-After (never left to hang past a client's 30 s); a detached job's waits. On PGlite the statements of
// gate work give way to requests' on the one connection, so a read is answered between a gate run's steps.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GateQueue, ServerBusyError } from '../../../src/server/db/gate-queue.js';
import type { Db } from '../../../src/server/db/handle.js';
import { openDb } from '../../../src/server/db/index.js';
import { scratchDir } from '../../helpers/migrated-database.js';
import { GATE_SLOTS } from '../../../src/server/db/pglite.js';

function deferred() {
  let release: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (release = resolve));
  return { done, release };
}

/** The ServerBusyError `work` is refused with. */
async function refusal(work: Promise<unknown>): Promise<ServerBusyError> {
  const error: unknown = await work.catch((e: unknown) => e);
  if (!(error instanceof ServerBusyError)) throw new Error(`not refused as busy: ${String(error)}`);
  return error;
}

describe('GateQueue', () => {
  it('runs `slots` at once, queues `depth` more in order, and refuses the next at once with 503 and Retry-After', async () => {
    const queue = new GateQueue({ slots: 1, depth: 1, startDeadlineMs: 600_000 });
    const first = deferred();
    const order: string[] = [];
    const running = queue.run(async () => {
      order.push('first');
      await first.done;
    });
    const waiting = queue.run(async () => void order.push('second'));
    const refused = await refusal(queue.run(async () => void order.push('third')));
    expect(refused.status).toBe(503);
    expect(refused.code).toBe('server_busy');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.details).toMatchObject({ running: 1, waiting: 1 });
    expect(refused.message).toMatch(/queue of 1 is full.*Nothing was done/);
    first.release();
    await Promise.all([running, waiting]);
    expect(order).toEqual(['first', 'second']);
  });

  it('refuses a request whose work cannot start within the deadline; background work waits and is never refused', async () => {
    const queue = new GateQueue({ slots: 1, depth: 1, startDeadlineMs: 1 });
    const first = deferred();
    const running = queue.run(() => first.done);
    const late = await refusal(queue.run(async () => 'never'));
    expect(late.message).toMatch(/could not start within 0.001 s/);
    const jobs = [queue.run(async () => 'job 1', true), queue.run(async () => 'job 2', true)];
    first.release();
    await running;
    expect(await Promise.all(jobs)).toEqual(['job 1', 'job 2']);
    // Everything ended: the slot is free again.
    expect(await queue.run(async () => 'free')).toBe('free');
  });
});

describe('gate work on PGlite', () => {
  let db: Db;
  beforeAll(async () => {
    db = await openDb({ scratchDir: await scratchDir() });
  });
  afterAll(async () => {
    await db?.close();
  });

  it('runs GATE_SLOTS at once, queues more, and refuses a request past the queue with 503 at once', async () => {
    const gateWork = db.gateWork?.bind(db);
    if (!gateWork) throw new Error('PGlite runs gate work in a queue');
    const held = deferred();
    const started: number[] = [];
    const works: Array<Promise<unknown>> = [];
    // The slots, then the queue: the first refusal comes when both are full.
    let refused: ServerBusyError | undefined;
    for (let i = 0; refused === undefined && i < 50; i++) {
      const work = gateWork(async () => {
        started.push(i);
        await held.done;
      });
      let outcome: unknown = 'pending';
      work.then(
        () => (outcome = 'done'),
        (error: unknown) => (outcome = error),
      );
      await new Promise((resolve) => setImmediate(resolve));
      if (outcome instanceof ServerBusyError) refused = outcome;
      else works.push(work);
    }
    expect(refused?.status).toBe(503);
    expect(started).toHaveLength(GATE_SLOTS);
    expect(works.length).toBeGreaterThan(GATE_SLOTS);
    held.release();
    await Promise.all(works);
    expect(started).toHaveLength(works.length);
  });

  it("lets a request's statement go before gate work's that waited longer", async () => {
    const gateWork = db.gateWork?.bind(db);
    if (!gateWork) throw new Error('PGlite runs gate work in a queue');
    const held = deferred();
    const order: string[] = [];
    await gateWork(async (later) => {
      let holding: () => void = () => undefined;
      const inside = new Promise<void>((resolve) => (holding = resolve));
      const transaction = later.transaction(async (tx) => {
        await tx.query('SELECT 1');
        holding();
        await held.done;
      });
      await inside;
      // The connection is held: gate work's statement waits first, then a request's.
      const gateStatement = later.query('SELECT 2').then(() => order.push('gate work'));
      const request = db.query('SELECT 3').then(() => order.push('request'));
      held.release();
      await Promise.all([transaction, gateStatement, request]);
    });
    expect(order).toEqual(['request', 'gate work']);
  });
});
