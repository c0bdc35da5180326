// A service that hands back a cursor it already gave would be paged forever. Every cursor-following list
// (tables, recertification requests, and the walkers of the audit log and records) goes through one
// helper: the pages before the repeat are handed on, nothing more is asked, and the command fails with
// exit 1 `pagination_loop` naming the list and the cursor.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http, HttpResponse } from 'msw';
import { beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../src/core/errors.js';
import { withSession } from '../../src/cli/session.js';
import type { Session } from '../../src/cli/session.js';
import { listAuditEntries } from '../../src/services/audit.js';
import { listRecertificationRequestPages } from '../../src/services/recertification.js';
import { listTablePages } from '../../src/services/tables.js';
import { BASE, useMockApi } from '../client/mock-api.js';

const api = useMockApi();
const TOKEN = 'cli_cursorLoopToken000001';
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'gds-cursor-loop-'));
  env = {
    GDS_CONFIG_DIR: join(dir, 'gds'),
    GDS_SECRET_STORAGE: 'file',
    SERVICE_TOKEN: TOKEN,
    SERVICE_API_URL: BASE,
  };
});

/**
 * Serves `path` from a chain of cursors: no cursor answers the first link's page, each cursor the page
 * after it; `chain[i]` is the nextCursor of the i-th page. A chain that repeats itself is a loop.
 */
function serveChain(path: string, chain: Array<string | null>, page: (n: number) => object) {
  let served = 0;
  return http.get(`${BASE}${path}`, ({ request }) => {
    const cursor = new URL(request.url).searchParams.get('cursor');
    // The page a cursor leads to is the one after the first page that gave it.
    const n = cursor === null ? 0 : chain.indexOf(cursor) + 1;
    // A client that follows the loop ends after 20 pages instead of hanging the test.
    served += 1;
    return HttpResponse.json({ ...page(n), nextCursor: served >= 20 ? null : (chain[n] ?? null) });
  });
}

const table = (id: string) => ({
  id,
  name: id,
  mode: 'MODE_A',
  state: 'REGISTERED',
  gate: 'ENFORCED',
  environmentLabel: 'dev',
});
const request = (id: string) => ({
  id,
  tableId: 't1',
  tableName: 'orders',
  environmentLabel: 'dev',
  cause: 'manual',
  status: 'OPEN',
  details: {},
  createdBy: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  dismissedBy: null,
  dismissedAt: null,
});
const entry = (id: string) => ({
  id,
  userId: 'u1',
  tableId: 't1',
  action: 'RECORD_CREATED',
  resource: 'record',
  environmentLabel: 'dev',
  gateModeAtEvaluation: '',
  createdAt: '2026-01-01T00:00:00.000Z',
});

/** Runs `walk` in a real session and returns what it handed on before failing, and the failure. */
async function walkInSession(walk: (session: Session, seen: string[]) => Promise<unknown>) {
  const seen: string[] = [];
  const failure = await withSession({ flags: {}, version: '1', env }, (session) => walk(session, seen)).then(
    () => undefined,
    (error: unknown) => error,
  );
  return { seen, failure };
}

function expectLoopFailure(failure: unknown, list: string, cursor: string): void {
  expect(failure).toBeInstanceOf(CliError);
  expect(failure).toMatchObject({
    exitCode: 1,
    code: 'pagination_loop',
    message: `The service returned the cursor "${cursor}" of ${list} twice; stopping.`,
    details: { list, cursor },
  });
  expect((failure as CliError).suggestion).toContain('The pages printed before this are complete');
}

const cursorsAsked = () => api.seen.map((r) => r.url.searchParams.get('cursor'));

describe('a repeated cursor fails the walk clearly, after the pages before it', () => {
  it('tables (gds list): the same cursor twice in a row', async () => {
    api.use(serveChain('/api/tables', ['c1', 'c1'], (n) => ({ tables: [table(`t${n}`)] })));
    const { seen, failure } = await walkInSession(async ({ client }, seen) => {
      for await (const page of listTablePages(client)) seen.push(...page.rows.map((t) => t.id));
    });
    expectLoopFailure(failure, '/api/tables', 'c1');
    expect(seen).toEqual(['t0', 't1']);
    expect(cursorsAsked()).toEqual([null, 'c1']);
  });

  it('tables: a cursor that comes back after another (a longer loop) is caught too', async () => {
    api.use(serveChain('/api/tables', ['c1', 'c2', 'c1'], (n) => ({ tables: [table(`t${n}`)] })));
    const { seen, failure } = await walkInSession(async ({ client }, seen) => {
      for await (const page of listTablePages(client, { withTotal: false })) {
        seen.push(...page.rows.map((t) => t.id));
      }
    });
    expectLoopFailure(failure, '/api/tables', 'c1');
    expect(seen).toEqual(['t0', 't1', 't2']);
    expect(cursorsAsked()).toEqual([null, 'c1', 'c2']);
  });

  it('recertification requests (gds recertification list)', async () => {
    api.use(
      serveChain('/api/recertification-requests', ['r1', 'r1'], (n) => ({
        requests: [request(`q${n}`)],
        ...(n === 0 ? { total: 5 } : {}),
      })),
    );
    const { seen, failure } = await walkInSession(async ({ client }, seen) => {
      for await (const page of listRecertificationRequestPages(client, { all: true })) {
        seen.push(...page.rows.map((r) => r.id));
      }
    });
    expectLoopFailure(failure, '/api/recertification-requests', 'r1');
    expect(seen).toEqual(['q0', 'q1']);
    expect(cursorsAsked()).toEqual([null, 'r1']);
  });

  it('the audit log (gds audit list --all), walked entry by entry', async () => {
    api.use(
      serveChain('/api/workspace/audit-log', ['a1', 'a1'], (n) => ({
        entries: [entry(`e${n}`), entry(`f${n}`)],
      })),
    );
    const { seen, failure } = await walkInSession(({ client }, seen) =>
      listAuditEntries(client, { all: true }, (e) => seen.push(e.id)),
    );
    expectLoopFailure(failure, '/api/workspace/audit-log', 'a1');
    expect(seen).toEqual(['e0', 'f0', 'e1', 'f1']);
    expect(cursorsAsked()).toEqual([null, 'a1']);
  });

  it('records, walked entry by entry', async () => {
    api.use(
      serveChain('/api/tables/t1/records', ['x1', 'x2', 'x1'], (n) => ({
        records: [{ id: `r${n}` }],
        limit: 100,
      })),
    );
    const { seen, failure } = await walkInSession(async ({ client }, seen) => {
      for await (const record of client.records.iterate('t1')) seen.push(String(record.id));
    });
    expectLoopFailure(failure, '/api/tables/t1/records', 'x1');
    expect(seen).toEqual(['r0', 'r1', 'r2']);
    expect(cursorsAsked()).toEqual([null, 'x1', 'x2']);
  });

  it('a list that ends (no cursor, null, or empty) is walked whole, each cursor once', async () => {
    api.use(
      serveChain('/api/tables', ['c1', 'c2', ''], (n) => ({ tables: [table(`t${n}`)] })),
      serveChain('/api/recertification-requests', ['r1', null], (n) => ({ requests: [request(`q${n}`)] })),
    );
    const { seen, failure } = await walkInSession(async ({ client }, seen) => {
      for await (const page of listTablePages(client)) seen.push(...page.rows.map((t) => t.id));
      for await (const page of listRecertificationRequestPages(client))
        seen.push(...page.rows.map((r) => r.id));
    });
    expect(failure).toBeUndefined();
    expect(seen).toEqual(['t0', 't1', 't2', 'q0', 'q1']);
    expect(cursorsAsked()).toEqual([null, 'c1', 'c2', null, 'r1']);
  });
});
