// `gds gate submit` and `gds apply --submit` send an Idempotency-Key with each submission, in the test process
// against the reference server: a connection dropped after the service took the submission is retried with
// the same key and answered as the first time (exit 0, one submission, the steward notified once); a CI step
// passing its own key with --idempotency-key and run again gets the first answer (stderr says so, `replayed:
// true` under --json), nothing scanned or notified again; a key the service would refuse is a usage error
// before anything is sent; apply --submit gives each table's submission a key of its own.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/core/errors.js';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { serverEnv } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import type { SignalProxy } from '../helpers/signal-proxy.js';
import { signalProxy } from '../helpers/signal-proxy.js';
import type { GeneratedProject } from './generated-project.js';
import { generatedProject, jsonLines, linesWhere } from './generated-project.js';
import { startTestServer } from './test-server.js';

const isSubmission = (method: string, path: string) =>
  method === 'POST' && /\/api\/tables\/[^/]+\/gate-submissions$/.test(path);

/** A proxy before `url` that drops the connection after the service answered the first submission of each
 *  table, and keeps the Idempotency-Key of every submission that reached the service. */
async function droppingProxy(url: string) {
  const keys: Array<{ path: string; key: string | undefined }> = [];
  const proxy = await signalProxy(url, {
    watches: isSubmission,
    gone: () => false,
    heard: (_answer, request) => {
      const path = request.url ?? '';
      const key = request.headers['idempotency-key'];
      const first = !keys.some((k) => k.path === path);
      keys.push({ path, key: typeof key === 'string' ? key : undefined });
      // The service took the submission; gds never hears of it, the first time.
      return !first;
    },
  });
  return { proxy, keys };
}

describe('gds gate submit with an Idempotency-Key', () => {
  let server: TestServer;
  let dir: string;
  let proxy: SignalProxy | undefined;
  const outputs: string[] = [];

  beforeAll(async () => {
    server = await startTestServer({ jobs: 'manual' });
    dir = await mkdtemp(join(tmpdir(), 'gds-e2e-submit-key-'));
  });

  afterAll(async () => {
    await proxy?.close();
    await server?.close();
    const token = server?.user('OWNER').cliToken;
    for (const output of outputs) if (token !== undefined) expect(output).not.toContain(token);
  });

  async function gds(args: string[], url = server.url): Promise<CliResult> {
    const result = await runInProcess(args, {
      env: serverEnv(url, server.user('OWNER').cliToken, join(dir, 'gds')),
    });
    outputs.push(result.stdout, result.stderr);
    return result;
  }

  /** The table's submissions (proofs of kind submit) and the steward's notifications of them. */
  async function submissions(tableId: string) {
    const [row] = await server.sql<{ proofs: number; notified: number }>(
      `SELECT (SELECT count(*)::int FROM gds.gate_proofs WHERE table_id = $1 AND kind = 'submit') AS proofs,
              (SELECT count(*)::int FROM gds.audit_log
                WHERE table_id = $1 AND action = 'STEWARD_NOTIFIED') AS notified`,
      [tableId],
    );
    return { proofs: row?.proofs ?? 0, notified: row?.notified ?? 0 };
  }

  /**
   * `gate submit TABLE --json ...extra` through a proxy that drops the connection after the service answered
   * the first attempt: exit 0, one JSON line (the proof, never called replayed: the retry's replay is this
   * run's own submission), one submission and one notification. Returns that line and the keys sent.
   */
  async function submitThroughDrop(tableId: string, extra: string[] = []) {
    const before = await submissions(tableId);
    const dropping = await droppingProxy(server.url);
    proxy = dropping.proxy;
    try {
      const r = await gds(['gate', 'submit', tableId, ...extra, '--json'], proxy.url);
      expect(r.code, r.stderr).toBe(0);
      // The first attempt reached the service and was cut off; the transport's retry carried the same key.
      expect(dropping.keys).toHaveLength(2);
      const [line, ...rest] = jsonLines(r.stdout);
      expect(rest).toEqual([]);
      expect(line).toMatchObject({ tableId, state: 'PENDING_REVIEW' });
      expect(line?.replayed).toBeUndefined();
      expect(r.stderr).not.toContain('Replayed');
      expect(await submissions(tableId)).toEqual({
        proofs: before.proofs + 1,
        notified: before.notified + 1,
      });
      return { line, keys: dropping.keys.map((k) => k.key) };
    } finally {
      await proxy.close();
      proxy = undefined;
    }
  }

  it('a connection dropped after the service took the submission: exit 0, one submission, one notification', async () => {
    const { keys } = await submitThroughDrop(server.table('orders').id);
    const [first, retry] = keys;
    expect(first).toMatch(/^[0-9a-f-]{36}$/);
    expect(retry).toBe(first);
  });

  it('a connection dropped on a run with --idempotency-key: the retry is this run’s submission, not called replayed', async () => {
    const customers = server.table('customers').id;
    const key = 'ci-5151-customers';
    const { line, keys } = await submitThroughDrop(customers, ['--idempotency-key', key]);
    expect(keys).toEqual([key, key]);
    // The step run again (no connection lost): that is a replay of the first answer, and says so.
    const again = await gds(['gate', 'submit', customers, '--idempotency-key', key, '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(jsonLines(again.stdout)).toEqual([{ ...line, replayed: true }]);
    expect(again.stderr).toContain('Replayed');
  });

  it('without --idempotency-key, each run is a new submission (a fresh key each time)', async () => {
    const orders = server.table('orders').id;
    const before = await submissions(orders);
    for (let run = 0; run < 2; run += 1) {
      const r = await gds(['gate', 'submit', orders, '--json']);
      expect(r.code, r.stderr).toBe(0);
      expect(jsonLines(r.stdout)[0]?.replayed).toBeUndefined();
      expect(r.stderr).not.toContain('Replayed');
    }
    expect((await submissions(orders)).proofs).toBe(before.proofs + 2);
  });

  it('--idempotency-key K run twice: the second run replays the first answer and says so', async () => {
    const orders = server.table('orders').id;
    const before = await submissions(orders);
    const key = 'ci-4242-1';
    const first = await gds(['gate', 'submit', orders, '--idempotency-key', key, '--json']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).not.toContain('Replayed');
    const [proof] = jsonLines(first.stdout);
    expect(proof?.replayed).toBeUndefined();

    const again = await gds(['gate', 'submit', orders, '--idempotency-key', key, '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(jsonLines(again.stdout)).toEqual([{ ...proof, replayed: true }]);
    expect(again.stderr).toContain(
      `Replayed: the service already took this submission (Idempotency-Key ${key})`,
    );
    // Under --json every line of stderr is JSON: the note is a warning line.
    expect(
      again.stderr
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown),
    ).toEqual([{ warning: { message: expect.stringMatching(/^Replayed: /) } }]);
    const human = await gds(['gate', 'submit', orders, '--idempotency-key', key]);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain(`Proof ${String(proof?.id)}`);
    expect(human.stderr).toContain('no new scan ran and the steward was not notified again');
    expect(await submissions(orders)).toEqual({
      proofs: before.proofs + 1,
      notified: before.notified + 1,
    });
  });

  it('a key the service would refuse: usage error, nothing submitted', async () => {
    const orders = server.table('orders').id;
    const before = await submissions(orders);
    for (const key of ['has space', 'x'.repeat(201), '', 'tab\there', 'é']) {
      const r = await gds(['gate', 'submit', orders, '--idempotency-key', key]);
      expect(r.code, key).toBe(ExitCode.Usage);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain('1-200 printable ASCII characters without spaces');
    }
    expect(await submissions(orders)).toEqual(before);
  });
});

describe('gds apply --submit', { timeout: 300_000 }, () => {
  let shop: GeneratedProject;
  let proxy: SignalProxy | undefined;

  beforeAll(async () => {
    shop = await generatedProject('submit-key');
  });

  afterAll(async () => {
    await proxy?.close();
    await shop?.close();
  });

  it('gives each submission a key of its own: a dropped connection is retried, each table submitted once', async () => {
    const { server, onDev } = shop;
    const dropping = await droppingProxy(server.url);
    proxy = dropping.proxy;
    const r = await runInProcess(
      ['apply', ...onDev(), '--select', 'raw_source_0 raw_source_1', '--submit', '--yes', '--json'],
      { env: serverEnv(proxy.url, server.user('ADMIN').cliToken, join(shop.dir, 'config')) },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(linesWhere(jsonLines(r.stdout), ['step', 'submit'], 'table', 'outcome')).toEqual([
      ['raw_source_0', 'done'],
      ['raw_source_1', 'done'],
    ]);
    // Two tables, each cut off once and retried with its own key.
    expect(dropping.keys).toHaveLength(4);
    const keyOf = new Map<string, string | undefined>();
    for (const { path, key } of dropping.keys) {
      expect(key).toMatch(/^[0-9a-f-]{36}$/);
      if (keyOf.has(path)) expect(key).toBe(keyOf.get(path));
      else keyOf.set(path, key);
    }
    expect(new Set(keyOf.values()).size).toBe(2);
    const held = await server.sql<{ name: string; state: string; submitted: number }>(
      `SELECT t.name, t.state,
              (SELECT count(*)::int FROM gds.gate_proofs p WHERE p.table_id = t.id AND p.kind = 'submit') AS submitted
         FROM gds.tables t
        WHERE t.workspace_id = $1 AND t.active AND t.project IS NOT NULL ORDER BY t.name`,
      [server.ready.workspaceId],
    );
    expect(held).toEqual([
      { name: 'raw_source_0', state: 'PENDING_REVIEW', submitted: 1 },
      { name: 'raw_source_1', state: 'PENDING_REVIEW', submitted: 1 },
    ]);
  });
});
