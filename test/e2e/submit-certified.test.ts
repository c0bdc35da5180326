// `gds gate submit` on a CERTIFIED table, run by gds in the test process against a real reference server: the submission
// withdraws the certified view (certified_<env>.<table>) until the table is certified again, and says so
// (stderr in human mode; viewWithdrawn/withdrawnView in the JSON line); --if-not-certified leaves a
// CERTIFIED table and its view as they are (exit 0, says so) and submits any other table as usual.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

let server: TestServer;
let dir: string;

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual' });
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-submit-'));
});

afterAll(async () => {
  await server?.close();
});

function gds(args: string[]): Promise<CliResult> {
  return runInProcess(args, {
    env: {
      GDS_CONFIG_DIR: join(dir, 'gds'),
      GDS_SECRET_STORAGE: 'file',
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: server.user('OWNER').cliToken,
    },
  });
}

/** Every line of a --json stdout, parsed. */
function lines(text: string): Array<Record<string, unknown>> {
  const all = text.split('\n');
  expect(all.pop()).toBe('');
  return all.map((l) => JSON.parse(l) as Record<string, unknown>);
}

const stateOf = async (id: string) =>
  (await server.sql<{ state: string }>('SELECT state FROM gds.tables WHERE id = $1', [id]))[0]?.state;
const viewExists = async (view: string) =>
  (await server.sql<{ r: string | null }>('SELECT to_regclass($1)::text AS r', [view]))[0]?.r !== null;
const proofCount = async (id: string) =>
  Number(
    (
      await server.sql<{ n: number }>('SELECT count(*)::int AS n FROM gds.gate_proofs WHERE table_id = $1', [
        id,
      ])
    )[0]?.n,
  );

describe('gate submit --if-not-certified', () => {
  it('a CERTIFIED table: nothing submitted, its view stays, exit 0, stderr says so', async () => {
    const customers = server.table('customers').id;
    expect(await stateOf(customers)).toBe('CERTIFIED');
    expect(await viewExists('certified_dev.customers')).toBe(true);
    const proofs = await proofCount(customers);
    const r = await gds(['gate', 'submit', customers, '--if-not-certified']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^Skipped \(--if-not-certified\): .*CERTIFIED.*certified_dev\.customers/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(await stateOf(customers)).toBe('CERTIFIED');
    expect(await viewExists('certified_dev.customers')).toBe(true);
    expect(await proofCount(customers)).toBe(proofs);
  });

  it('--json: one line {skipped: true, …} on stdout, nothing on stderr', async () => {
    const customers = server.table('customers').id;
    const r = await gds(['gate', 'submit', 'customers', '--if-not-certified', '--json']);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(lines(r.stdout)).toEqual([
      {
        skipped: true,
        tableId: customers,
        state: 'CERTIFIED',
        certifiedView: 'certified_dev.customers',
        reason: expect.stringContaining('CERTIFIED'),
      },
    ]);
    expect(await stateOf(customers)).toBe('CERTIFIED');
  });

  it('a table that is not CERTIFIED is submitted as usual', async () => {
    const orders = server.table('orders').id;
    const r = await gds(['gate', 'submit', orders, '--if-not-certified', '--json']);
    expect([0, 1]).toContain(r.code);
    expect(lines(r.stdout)).toEqual([
      expect.objectContaining({
        kind: 'submit',
        tableId: orders,
        state: 'PENDING_REVIEW',
        viewWithdrawn: false,
      }),
    ]);
    expect(lines(r.stdout)[0]).not.toHaveProperty('withdrawnView');
    expect(await stateOf(orders)).toBe('PENDING_REVIEW');
  });
});

describe('gate submit on a CERTIFIED table', () => {
  it('--json: viewWithdrawn and withdrawnView in the line, the view is gone, nothing on stderr', async () => {
    const contacts = server.table('crm_contacts').id;
    expect(await viewExists('certified_dev.crm_contacts')).toBe(true);
    const r = await gds(['gate', 'submit', contacts, '--json']);
    expect([0, 1]).toContain(r.code);
    expect(r.stderr).toBe('');
    expect(lines(r.stdout)).toEqual([
      expect.objectContaining({
        tableId: contacts,
        state: 'PENDING_REVIEW',
        viewWithdrawn: true,
        withdrawnView: 'certified_dev.crm_contacts',
      }),
    ]);
    expect(await viewExists('certified_dev.crm_contacts')).toBe(false);
  });

  it('human mode: the proof on stdout, the withdrawn view said on stderr', async () => {
    const customers = server.table('customers').id;
    const r = await gds(['gate', 'submit', customers]);
    expect([0, 1]).toContain(r.code);
    expect(r.stdout).toContain('table now PENDING_REVIEW');
    expect(r.stdout).not.toContain('withdrawn');
    expect(r.stderr).toContain(
      'its certified view certified_dev.customers is withdrawn until the table is certified again',
    );
    expect(await stateOf(customers)).toBe('PENDING_REVIEW');
    expect(await viewExists('certified_dev.customers')).toBe(false);
  });

  it('a replayed submission says the view was withdrawn by the first, not that it is withdrawn now', async () => {
    const table = server.table('customers_production').id;
    expect(await stateOf(table)).toBe('CERTIFIED');
    const key = `replay-${table}`;
    const first = await gds(['gate', 'submit', table, '--idempotency-key', key]);
    expect(first.stderr).toMatch(/its certified view \S+ is withdrawn until the table is certified again/);
    const again = await gds(['gate', 'submit', table, '--idempotency-key', key]);
    expect(again.code).toBe(first.code);
    expect(again.stderr).toContain('Replayed: the service already took this submission');
    expect(again.stderr).not.toContain('is withdrawn until');
    expect(again.stderr).toMatch(
      /its certified view \S+ was withdrawn by that submission; it stays withdrawn until the table is certified again/,
    );
    expect(await proofCount(table)).toBe(1);
  });
});
