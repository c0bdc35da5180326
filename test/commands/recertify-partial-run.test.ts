// `gds recertify` of a run cut off part-way, on PGlite and PostgreSQL (skipped, saying why, without
// GDS_TEST_DATABASE_URL). A 1,100-model run goes as three signals (500, 500, 100) through a proxy that stands
// for a service killed mid-run: it lets the service apply the second signal, then drops the connection
// before the answer arrives, and is gone for gds's retries of that signal. The run fails with exit 9 saying which dbt nodes were signalled, which may have
// been and which were not; the same run started again sends only the second and third parts, the service
// answers the second as the first time without applying it again, and every table is signalled exactly once.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError, ExitCode } from '../../src/core/errors.js';
import { createApiClient, staticToken } from '../../src/client/index.js';
import type { RecertifyWarning } from '../../src/services/recertification.js';
import { recertify } from '../../src/services/recertification.js';
import { runResultsOf } from '../helpers/certified-copies.js';
import { startRecertifyServer } from '../helpers/recertify-runs.js';
import { ENGINES } from '../helpers/engines.js';
import type { TestServer } from '../helpers/server.js';
import type { SignalProxy } from '../helpers/signal-proxy.js';
import { signalProxy } from '../helpers/signal-proxy.js';
import { needs } from '../helpers/skip.js';

const MODELS = 1_100;

describe.each(ENGINES)('a recertify run cut off part-way on $engine', ({ postgres, skip }) => {
  let server: TestServer;
  let proxy: SignalProxy | undefined;
  let proxyUrl: string;
  let token: string;
  let file: string;
  let names: string[];
  /** The recertification signals that reached the service, and whether it answered each as a replay. */
  const signals: Array<{ replayed: boolean }> = [];
  /** The signal (1-based, counted from now) whose answer the proxy drops after the service applied it. */
  let cutAt: number | undefined;
  /** After that, the service is gone: gds's retries of the signal (it carries an idempotency key) find no one. */
  let down = false;

  beforeAll(async () => {
    if (skip !== undefined) return;
    ({ server, token, names } = await startRecertifyServer({ postgres, models: MODELS, prefix: 'cut' }));
    const dir = await mkdtemp(join(tmpdir(), 'gds-recertify-cut-'));
    file = join(dir, 'run_results.json');
    await writeFile(file, runResultsOf(names, 'inv-cut'));
    proxy = await signalProxy(server.url, {
      gone: () => down,
      heard: (answer) => {
        signals.push({ replayed: answer.headers['idempotent-replayed'] === 'true' });
        if (cutAt === undefined || (cutAt -= 1) !== 0) return true;
        // The service applied the signal; the client never hears of it.
        down = true;
        return false;
      },
    });
    proxyUrl = proxy.url;
  }, 300_000);

  afterAll(async () => {
    await proxy?.close();
    await server?.close();
  });

  const run = async (warnings: RecertifyWarning[] = []) => {
    const client = createApiClient({
      baseUrl: proxyUrl,
      auth: staticToken(token),
      sleep: async () => {},
      logger: () => {},
    });
    try {
      return await recertify(client, { runResults: file, service: proxyUrl }, (w) => warnings.push(w));
    } finally {
      await client.close();
    }
  };

  const signalled = async () =>
    (
      await server.sql<{ n: number; tables: number }>(
        `SELECT count(*)::int AS n, count(DISTINCT table_id)::int AS tables FROM gds.audit_log
          WHERE action = 'RECERTIFY_SIGNAL' AND table_id LIKE 'tbl_cut\\_%'`,
      )
    )[0];

  const ids = (from: number, to: number) => names.slice(from, to).map((n) => `model.shop.${n}`);

  it('says which nodes went, which may have, and which did not; exit 9', needs(skip), async () => {
    cutAt = 2;
    const error = await run().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CliError);
    const failure = error as CliError;
    expect(failure.exitCode).toBe(ExitCode.Unavailable);
    expect(failure.message).toContain('Part 2 of the 3 signals of this run failed');
    expect(failure.message).toContain(
      '500 of 1100 rebuilt tables were signalled (500 governed); the 500 of part 2 may have been (the answer was lost); 100 were not.',
    );
    expect(failure.details).toMatchObject({
      partsSignalled: 1,
      parts: 3,
      signalled: ids(0, 500),
      unconfirmed: ids(500, 1000),
      notSent: ids(1000, 1100),
    });
    expect(signals).toEqual([{ replayed: false }, { replayed: false }]);
    // The service applied parts 1 and 2, each table once.
    expect(await signalled()).toEqual({ n: 1000, tables: 1000 });
  });

  it('the same run again sends only the rest, and nothing is applied twice', needs(skip), async () => {
    signals.length = 0;
    down = false;
    const warnings: RecertifyWarning[] = [];
    const response = await run(warnings);
    expect(warnings).toEqual([
      expect.objectContaining({ code: 'resumed', message: expect.stringContaining('Parts 1 of the 3') }),
    ]);
    // Part 1 was not sent; part 2 was, and the service answered it as the first time.
    expect(signals).toEqual([{ replayed: true }, { replayed: false }]);
    expect(response.submitted).toBe(MODELS);
    expect(response.governed).toBe(MODELS);
    expect(response.outcomes.map((o) => o.table)).toEqual(names);
    expect(await signalled()).toEqual({ n: MODELS, tables: MODELS });
  });

  it('a finished run sent once more is answered, not applied again', needs(skip), async () => {
    signals.length = 0;
    const response = await run();
    expect(signals).toEqual([{ replayed: true }, { replayed: true }, { replayed: true }]);
    expect(response.governed).toBe(MODELS);
    expect(await signalled()).toEqual({ n: MODELS, tables: MODELS });
  });

  it('one idempotency key sent with another signal is refused, 422', needs(skip), async () => {
    const send = (tables: string[]) =>
      server.request('POST', '/api/workspace/recertify', {
        token,
        headers: { 'idempotency-key': 'key-one' },
        body: { tables },
      });
    expect((await send([names[0] as string])).status).toBe(200);
    const reused = await send([names[1] as string]);
    expect(reused.status).toBe(422);
    expect(reused.body).toMatchObject({ error: { code: 'idempotency_key_reused' } });
    const bad = await server.request('POST', '/api/workspace/recertify', {
      token,
      headers: { 'idempotency-key': 'has space' },
      body: { tables: ['x'] },
    });
    expect(bad.status).toBe(400);
  });
});
