// A request a nightly pipeline merges into for months keeps every signal, but a list of requests stays small:
// each request as listed carries its latest 20 signals and `earlierSignals`, and
// GET /api/recertification-requests/{id}/signals pages through all of them, oldest first (GET
// /api/recertification-signals those of several requests at once). `gds recertification list --json` still prints
// every signal, and the dashboard's table page links to a page of all of them.
// On PGlite and on PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENGINES } from '../../helpers/engines.js';
import { runInProcess } from '../../helpers/run-in-process.js';
import type { TestServer } from '../../helpers/server.js';
import { startTestServer } from '../../helpers/server.js';
import { needs } from '../../helpers/skip.js';

/** Signals merged into the request by the arrangement: the gate1.yml applied, then these nightly runs. */
const NIGHTLY_RUNS = 46;
const ALL = NIGHTLY_RUNS + 1;

describe.each(ENGINES)('a request merged by many signals, on $engine', ({ postgres, skip }) => {
  let server: TestServer;
  let requestId: string;
  let tableId: string;

  beforeAll(async () => {
    if (skip !== undefined) return;
    server = await startTestServer({ database: postgres ? 'postgres' : 'pglite', jobs: 'manual' });
    tableId = server.table('customers').id;
    // The seed certified customers: other rules file a manual request…
    const applied = await server.request('PUT', `/api/tables/${tableId}/gate1`, {
      token: server.user('OWNER').cliToken,
      body: {
        content: 'customPredicates:\n  - name: has_id\n    sql: id IS NOT NULL\n    severity: HARD_FAIL\n',
      },
    });
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    requestId = applied.body.recertificationRequestId;
    // …into which a run a night merges, for a month and a half (as the engine's merge writes them).
    await server.sql(
      `INSERT INTO gds.recertification_signals (id, request_id, cause, details, created_by, created_at)
       SELECT 'rcs_night' || lpad(n::text, 3, '0'), $1, 'manual', jsonb_build_object('trigger', 'night ' || n),
              $2, first.created_at + n * interval '1 day'
         FROM generate_series(1, ${NIGHTLY_RUNS}) AS n,
              (SELECT min(created_at) AS created_at FROM gds.recertification_signals WHERE request_id = $1) first`,
      [requestId, server.user('STEWARD').userId],
    );
    await server.sql(
      `UPDATE gds.recertification_requests SET signal_count = signal_count + ${NIGHTLY_RUNS} WHERE id = $1`,
      [requestId],
    );
  });

  afterAll(async () => {
    await server?.close();
  });

  const triggers = (signals: Array<{ details: { trigger?: string } }>) =>
    signals.map((s) => s.details.trigger);
  const nights = (from: number, to: number) =>
    Array.from({ length: to - from + 1 }, (_, i) => `night ${from + i}`);

  it(
    'the list carries the latest 20 signals, oldest first, and says earlier ones are kept',
    needs(skip),
    async () => {
      for (const query of [`tableId=${tableId}`, `tableId=${tableId}&limit=5`]) {
        const listed = await server.request('GET', `/api/recertification-requests?${query}`, {
          token: server.user('STEWARD').cliToken,
        });
        expect(listed.status).toBe(200);
        const [request] = listed.body.requests;
        expect(request).toMatchObject({ id: requestId, count: ALL, earlierSignals: true });
        expect(triggers(request.signals)).toEqual(nights(NIGHTLY_RUNS - 19, NIGHTLY_RUNS));
      }
    },
  );

  it('the signals endpoint pages through every one, oldest first', needs(skip), async () => {
    const seen: Array<{ details: { trigger?: string; reason?: string } }> = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await server.request(
        'GET',
        `/api/recertification-requests/${requestId}/signals?limit=20${cursor ? `&cursor=${cursor}` : ''}`,
        { token: server.user('MEMBER').cliToken },
      );
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      seen.push(...page.body.signals);
      cursor = page.body.nextCursor;
      pages += 1;
    } while (cursor !== null);
    expect(pages).toBe(3);
    expect(seen[0]?.details.reason).toBe('gate1.yml applied');
    expect(triggers(seen.slice(1))).toEqual(nights(1, NIGHTLY_RUNS));
    // Another workspace's member, and an unknown request: not found.
    for (const [id, token] of [
      [requestId, server.workspace(1).user('OWNER').cliToken],
      ['rcr_unknown', server.user('STEWARD').cliToken],
    ] as const) {
      const refused = await server.request('GET', `/api/recertification-requests/${id}/signals`, { token });
      expect(refused.status).toBe(404);
      expect(refused.body.error.code).toBe('recertification_request_not_found');
    }
  });

  it(
    'GET /api/recertification-signals pages through several requests at once, those of the caller only',
    needs(skip),
    async () => {
      // A request of the production table, which a STEWARD (dev, staging) may not read.
      const productionTable = server.table('customers_production').id;
      const applied = await server.request('PUT', `/api/tables/${productionTable}/gate1`, {
        token: server.user('OWNER').cliToken,
        body: {
          content: 'customPredicates:\n  - name: has_id\n    sql: id IS NOT NULL\n    severity: HARD_FAIL\n',
        },
      });
      expect(applied.status, JSON.stringify(applied.body)).toBe(200);
      const production: string = applied.body.recertificationRequestId;
      const read = async (role: 'OWNER' | 'STEWARD', token = server.user(role).cliToken) => {
        const seen: Array<{ requestId: string; details: { trigger?: string; reason?: string } }> = [];
        let cursor: string | null = null;
        do {
          const page = await server.request(
            'GET',
            `/api/recertification-signals?requestId=${requestId}&requestId=${production}&limit=20${cursor ? `&cursor=${cursor}` : ''}`,
            { token },
          );
          expect(page.status, JSON.stringify(page.body)).toBe(200);
          seen.push(...page.body.signals);
          cursor = page.body.nextCursor;
        } while (cursor !== null);
        return seen;
      };
      const all = await read('OWNER');
      const of = (id: string) => all.filter((s) => s.requestId === id);
      expect(of(requestId)).toHaveLength(ALL);
      expect(triggers(of(requestId).slice(1))).toEqual(nights(1, NIGHTLY_RUNS));
      expect(of(production)).toHaveLength(1);
      // Outside the caller's environments, or of another workspace: left out, as the request list leaves them.
      expect(new Set((await read('STEWARD')).map((s) => s.requestId))).toEqual(new Set([requestId]));
      expect(await read('OWNER', server.workspace(1).user('OWNER').cliToken)).toEqual([]);
      // No request, more than 100, or a parameter it does not know: 400 naming it.
      const many = Array.from({ length: 101 }, (_, i) => `requestId=rcr_${i}`).join('&');
      for (const [query, parameter] of [
        ['', 'requestId'],
        [many, 'requestId'],
        [`requestId=${requestId}&tableId=x`, undefined],
      ] as const) {
        const refused = await server.request('GET', `/api/recertification-signals?${query}`, {
          token: server.user('OWNER').cliToken,
        });
        expect(refused.status).toBe(400);
        expect(refused.body.error.code).toBe('invalid_query');
        if (parameter !== undefined) expect(refused.body.error.details.parameter).toBe(parameter);
      }
    },
  );

  it('gds recertification list --json prints every signal', needs(skip), async () => {
    const env = { SERVICE_API_URL: server.url, SERVICE_TOKEN: server.user('STEWARD').cliToken };
    const json = await runInProcess(['recertification', 'list', '--table', tableId, '--json'], { env });
    expect(json.code, json.stderr).toBe(0);
    const lines = json.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { id: string; signals: Array<{ details: { trigger?: string } }> });
    expect(lines).toHaveLength(1);
    expect(lines[0]?.signals).toHaveLength(ALL);
    expect(triggers(lines[0]?.signals.slice(1) ?? [])).toEqual(nights(1, NIGHTLY_RUNS));
  });

  it('the dashboard shows the latest 20 and a page of every signal', needs(skip), async () => {
    // A person's CLI token as a bearer, which the dashboard takes as it takes the sign-in cookie.
    const headers = { authorization: `Bearer ${server.user('MEMBER').cliToken}` };
    const tablePage = (
      await (await fetch(`${server.origin}/dashboard/tables/${tableId}`, { headers })).text()
    ).replace(/\s+/g, ' ');
    const section = tablePage.split('<h2>Open recertification requests</h2>')[1]?.split('<h2>')[0] ?? '';
    expect([...section.matchAll(/<li>/g)]).toHaveLength(20);
    expect(section).toContain(`The latest 20 of ${ALL}:`);
    expect(section).toContain(`href="/dashboard/recertification-requests/${requestId}"`);

    const all = await fetch(`${server.origin}/dashboard/recertification-requests/${requestId}`, {
      headers,
    });
    expect(all.status).toBe(200);
    const text = (await all.text()).replace(/\s+/g, ' ');
    const items = [...text.matchAll(/<li>(.*?)<\/li>/g)].map((m) => m[1] ?? '');
    expect(items).toHaveLength(ALL);
    expect(items[0]).toContain(`by ${server.user('OWNER').email}: reason: gate1.yml applied`);
    expect(items[ALL - 1]).toContain(`by ${server.user('STEWARD').email}: trigger: night ${NIGHTLY_RUNS}`);
    expect(text).not.toContain('rel="next"');

    const elsewhere = await fetch(`${server.origin}/dashboard/recertification-requests/rcr_unknown`, {
      headers,
    });
    expect(elsewhere.status).toBe(404);
  });
});
