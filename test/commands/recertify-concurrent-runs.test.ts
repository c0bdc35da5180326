// Two `gds recertify` runs of the same dbt run at once in one process (two CI jobs on one runner sharing
// $XDG_STATE_HOME), against the in-process server, on PGlite and PostgreSQL (skipped, saying why, without
// GDS_TEST_DATABASE_URL). A run of 1,001 rebuilt models goes as three signals (500, 500, 1). Both runs
// finish with the whole run's answer, every table is signalled once, and no state is left behind; two runs
// stopped part-way at once leave the parts either signalled (a save no longer drops the other run's parts),
// and the next run sends only the rest.
import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunFiles } from '../helpers/recertify-runs.js';
import { recertifyRun, runFiles, startRecertifyServer } from '../helpers/recertify-runs.js';
import { ENGINES } from '../helpers/engines.js';
import type { TestServer } from '../helpers/server.js';
import { needs } from '../helpers/skip.js';

const MODELS = 1_001;

describe.each(ENGINES)('two recertify runs at once on $engine', ({ postgres, skip }) => {
  let server: TestServer;
  let token: string;
  let names: string[];

  beforeAll(async () => {
    if (skip !== undefined) return;
    ({ server, token, names } = await startRecertifyServer({ postgres, models: MODELS, prefix: 'conc' }));
  }, 300_000);

  afterAll(async () => {
    await server?.close();
  });

  const setUp = (invocation: string) => runFiles(names, invocation);
  const run = (paths: RunFiles, stopAt?: number, beforeFirst?: Promise<unknown>) =>
    recertifyRun(server, token, paths, {
      ...(stopAt === undefined ? {} : { stopAt }),
      beforeFirst: () => beforeFirst ?? Promise.resolve(),
    });

  const signalled = async () =>
    (
      await server.sql<{ n: number; tables: number }>(
        `SELECT count(*)::int AS n, count(DISTINCT table_id)::int AS tables FROM gds.audit_log
          WHERE action = 'RECERTIFY_SIGNAL' AND table_id LIKE 'tbl_conc\\_%'`,
      )
    )[0];

  it('both finish with the whole run, each table signalled once, no state left', needs(skip), async () => {
    const paths = await setUp('inv-concurrent');
    const [a, b] = await Promise.all([run(paths), run(paths)]);
    for (const r of [a, b]) {
      expect(r.error).toBeUndefined();
      expect(r.response).toMatchObject({ submitted: MODELS, governed: MODELS });
      expect(r.warnings.filter((w) => w.code === 'state_not_kept')).toEqual([]);
    }
    expect(await signalled()).toEqual({ n: MODELS, tables: MODELS });
    expect(await readdir(paths.stateFolder).catch(() => [])).toEqual([]);
  });

  it(
    'two runs stopped part-way at once: the next sends only what neither signalled',
    needs(skip),
    async () => {
      const paths = await setUp('inv-concurrent-stopped');
      // Both read the state as they start (none); A's first signal is sent only once B has signalled parts 1
      // and 2 and stopped at 3, so A keeps part 1 after B kept parts 1 and 2, and stops at its part 2.
      const b = run(paths, 3);
      const [a] = await Promise.all([run(paths, 2, b), b]);
      expect(a.error).toBeDefined();
      expect((await b).error).toBeDefined();
      const again = await run(paths);
      expect(again.warnings).toEqual([
        expect.objectContaining({ code: 'resumed', message: expect.stringContaining('Parts 1, 2 of the 3') }),
      ]);
      expect(again.sent).toBe(1);
      expect(again.response).toMatchObject({ submitted: MODELS, governed: MODELS });
      expect(await readdir(paths.stateFolder)).toEqual([]);
    },
  );
});
