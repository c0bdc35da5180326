// `gds recertify` of a dbt run small enough for one signal (the usual case), when the service applied the signal
// and its answer never came back: through a proxy that stands for a service killed as it answered, once
// (gds sends the signal again with its idempotency key and is answered as the first time), or for good (gds
// says the signal was sent and may have been applied, and which dbt nodes it named: exit 9, one JSON error
// line under --json). The same command run again once the service is back applies nothing twice.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { runResultsOf } from '../helpers/certified-copies.js';
import { recertifyEnv, startRecertifyServer } from '../helpers/recertify-runs.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { SignalProxy } from '../helpers/signal-proxy.js';
import { signalProxy } from '../helpers/signal-proxy.js';
import type { TestServer } from '../helpers/server.js';

describe('recertify of a one-signal run whose answer is lost', () => {
  let server: TestServer;
  let proxy: SignalProxy | undefined;
  let proxyUrl: string;
  let dir: string;
  let token: string;
  let names: string[];
  /** How the proxy treats the next signals: forwards them, drops the answer of the next one, or is gone. */
  let mode: 'pass' | 'drop-once' | 'gone' = 'pass';
  /** The signals that reached the service. */
  let reached = 0;

  beforeAll(async () => {
    ({ server, token, names } = await startRecertifyServer({ models: 3, prefix: 'lost' }));
    dir = await mkdtemp(join(tmpdir(), 'gds-recertify-lost-'));
    await writeFile(join(dir, 'run_results.json'), runResultsOf(names, 'inv-lost'));
    proxy = await signalProxy(server.url, {
      gone: () => mode === 'gone' && reached > 0,
      heard: () => {
        reached += 1;
        // When not, the service applied the signal; gds never hears of it.
        return !(mode === 'gone' || (mode === 'drop-once' && reached === 1));
      },
    });
    proxyUrl = proxy.url;
  }, 120_000);

  afterAll(async () => {
    await proxy?.close();
    await server?.close();
  });

  const gds = (args: string[]): Promise<CliResult> =>
    runInProcess(args, {
      env: recertifyEnv(dir, proxyUrl, token),
    });
  const recertify = () =>
    gds(['recertify', '--run-results', join(dir, 'run_results.json'), '--env', 'dev', '--json']);

  /** RECERTIFY_SIGNAL audit entries of the run's tables: one per table each time the signal is applied. */
  const applied = async () =>
    (
      await server.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM gds.audit_log WHERE action = 'RECERTIFY_SIGNAL' AND table_id LIKE 'tbl_lost\\_%'`,
      )
    )[0]?.n;

  it('an answer lost once: gds sends the signal again and the service answers it without applying it twice', async () => {
    mode = 'drop-once';
    reached = 0;
    const r = await recertify();
    expect(r.code, r.stderr).toBe(0);
    expect(reached).toBe(2);
    const response = JSON.parse(r.stdout) as { governed: number; outcomes: Array<{ table: string }> };
    expect(response.governed).toBe(3);
    expect(response.outcomes.map((o) => o.table)).toEqual(names);
    expect(await applied()).toBe(3);
  });

  it('an answer lost for good: exit 9, saying the signal was sent and may have been applied, naming its nodes', async () => {
    mode = 'gone';
    reached = 0;
    // A run of its own (another invocation), so that the service has not answered it before.
    await writeFile(join(dir, 'run_results.json'), runResultsOf(names, 'inv-lost-2'));
    const before = await applied();
    const r = await recertify();
    expect(r.code).toBe(9);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    const { error } = JSON.parse(lines[0] ?? '') as {
      error: { code: string; message: string; suggestion: string; details: Record<string, unknown> };
    };
    expect(error.code).toBe('unreachable');
    expect(error.message).toContain('The signal of this run failed');
    expect(error.message).toContain('0 of 3 rebuilt tables were signalled');
    expect(error.message).toContain('the 3 of the signal may have been (the answer was lost)');
    expect(error.details).toMatchObject({
      signalled: [],
      unconfirmed: names.map((n) => `model.shop.${n}`),
      notSent: [],
      resumable: true,
    });
    expect(error.suggestion).toContain('without applying it twice');
    // The service did apply it, once.
    expect(await applied()).toBe((before ?? 0) + 3);

    // The service is back: the same command is answered as the first time, nothing applied again.
    mode = 'pass';
    const again = await recertify();
    expect(again.code, again.stderr).toBe(0);
    expect((JSON.parse(again.stdout) as { governed: number }).governed).toBe(3);
    expect(await applied()).toBe((before ?? 0) + 3);
  });
});
