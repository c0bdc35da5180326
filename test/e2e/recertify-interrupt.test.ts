// Ctrl-C or SIGTERM in the middle of `gds recertify` of a 1,100-model run (three signals of 500, 500 and 100)
// against a stub service that answers the first signal and never the second. The interrupted run exits 130
// (143 for SIGTERM) and its `Interrupted.` error says which dbt nodes were signalled, which may have been (the
// signal in flight) and which were not sent, and how to go on; the same command run again sends only the rest.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCommand, cliEnv, collect, ensureBuilt, repoRoot } from '../cli/helpers/cli-process.js';

const token = 'mgt_RecertifyInterruptToken01';
const MODELS = 1_100;
const ids = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) => `model.shop.orders_${from + i}`);

let stub: Server;
let base: string;
let runResults: string;
/** The number of rebuilt models in each signal that reached the stub. */
const signals: number[] = [];
/** Whether the stub leaves the second signal of a run unanswered. */
let holdSecond = true;

beforeAll(async () => {
  stub = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/api/workspace/recertify') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 'not_found', message: `no ${req.url}` } }));
        return;
      }
      const { runResults: run } = JSON.parse(body) as { runResults: { results: unknown[] } };
      signals.push(run.results.length);
      if (holdSecond && signals.length === 2) return; // the service is still working on it
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ environmentLabel: 'dev', submitted: run.results.length, governed: 0, outcomes: [] }),
      );
    });
  });
  await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
  const folder = await mkdtemp(join(tmpdir(), 'gds-recertify-int-'));
  runResults = join(folder, 'run_results.json');
  await writeFile(
    runResults,
    JSON.stringify({
      metadata: {
        dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v6.json',
        dbt_version: '1.8.0',
        invocation_id: 'inv-interrupt',
      },
      results: ids(0, MODELS).map((uniqueId) => ({
        status: 'success',
        unique_id: uniqueId,
        message: 'CREATE TABLE',
        adapter_response: {},
      })),
      elapsed_time: 60,
      args: { which: 'run' },
    }),
  );
  await ensureBuilt();
});

afterAll(async () => {
  stub.closeAllConnections();
  await new Promise((resolve) => stub.close(resolve));
});

describe.each([
  { signal: 'SIGINT' as const, code: 130, message: 'Interrupted.' },
  { signal: 'SIGTERM' as const, code: 143, message: 'Interrupted (SIGTERM).' },
])('$signal during gds recertify of a run in three signals', ({ signal, code, message }) => {
  it('says what went, what may have and what did not; the same command again sends only the rest', async () => {
    signals.length = 0;
    holdSecond = true;
    const env = cliEnv({
      GDS_CONFIG_DIR: join(await mkdtemp(join(tmpdir(), 'gds-int-')), 'gds'),
      XDG_STATE_HOME: await mkdtemp(join(tmpdir(), 'gds-int-state-')),
      SERVICE_API_URL: base,
      SERVICE_TOKEN: token,
    });
    const args = ['recertify', '--run-results', runResults, '--env', 'dev', '--json'];
    const [command, argv] = cliCommand(args);
    const child = spawn(command, argv, { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const done = collect(child);
    // Bounded wait for the second signal to reach the stub (at most 60 s on a loaded machine).
    for (let i = 0; i < 1200 && signals.length < 2; i += 1) await sleep(50);
    expect(signals).toEqual([500, 500]);
    child.kill(signal);
    const r = await done;
    expect(r.code).toBe(code);
    expect(r.stdout).toBe('');
    const lines = r.stderr
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { error?: { details: Record<string, unknown>; suggestion: string } });
    const errors = lines.filter((l) => l.error !== undefined);
    expect(errors).toHaveLength(1);
    const error = errors[0]?.error;
    expect(error).toMatchObject({
      code: 'interrupted',
      message,
      details: {
        partsSignalled: 1,
        parts: 3,
        submitted: 500,
        signalled: ids(0, 500),
        unconfirmed: ids(500, 1000),
        notSent: ids(1000, MODELS),
      },
    });
    expect(error?.suggestion).toContain('500 of 1100 rebuilt tables were signalled, 500 may have been');
    expect(error?.suggestion).toContain('Run the same gds recertify again');
    expect(r.stderr).not.toContain(token);

    // Again, with a service that answers: the first part is not sent again.
    signals.length = 0;
    holdSecond = false;
    const [command2, argv2] = cliCommand(args);
    const again = await collect(
      spawn(command2, argv2, { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    expect(again.code).toBe(0);
    expect(signals).toEqual([500, 100]);
    expect(JSON.parse(again.stdout)).toMatchObject({ submitted: MODELS });
  });
});
