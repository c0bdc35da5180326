// `gds records export` against a server whose rate limit is low (20 requests a minute per token): the run
// spans two windows and meets no 429, because it waits for the window's reset once an answer says none is
// left (GDS_DEBUG=1 logs every answer's status). The same token sending the same number of requests without
// pacing is refused, so the limit is really there. The window is the spec's minute on the server's clock:
// gds runs in the test process, and the time it waits for the reset passes on the server's clock at once
// (its pacer's sleep moves that clock), so the run takes seconds, not the minute. Against the single
// executable (GDS_TEST_CLI) it waits the real minute.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type * as RatePacerModule from '../../src/client/rate-pacer.js';
import type { RatePacerOptions } from '../../src/client/rate-pacer.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import { createModeBTable, fillRows, storedRows } from '../helpers/records.js';
import { runInProcess } from '../helpers/run-in-process.js';

const serverTime = vi.hoisted(() => ({ advance: (ms: number): void => void ms }));
vi.mock('../../src/client/rate-pacer.js', async (importOriginal) => {
  const actual = await importOriginal<typeof RatePacerModule>();
  class PacerOnServerTime extends actual.RatePacer {
    constructor(options: RatePacerOptions = {}) {
      super({ sleep: async (ms) => serverTime.advance(ms), ...options });
    }
  }
  return { ...actual, RatePacer: PacerOnServerTime };
});

const LIMIT = 20;
const ROWS = 2_500; // 25 pages of 100: one window and a quarter
let server: TestServer;
let table: string;

beforeAll(async () => {
  server = await startTestServer({ rateLimit: LIMIT });
  serverTime.advance = (ms) => server.clock.advance(ms);
  table = await createModeBTable(server, 'paced');
  await fillRows(server, table, ROWS);
});

afterAll(async () => {
  await server.close();
});

const tokenFor = async (name: string) =>
  (
    await server.issueToken('OWNER', {
      name,
      env: 'dev',
      scopes: [{ tableId: table, permissions: ['read'] }],
    })
  ).tokens.accessToken;

describe('export paced by the rate headers', () => {
  it('spans two windows without one 429, every row once', async () => {
    const token = await tokenFor('paced');
    const r = await runInProcess(['records', 'export', table], {
      env: { SERVICE_TOKEN: token, SERVICE_API_URL: server.url, GDS_DEBUG: '1' },
    });
    expect(r.code, r.stderr).toBe(0);
    const answers = [...r.stderr.matchAll(/^gds: ← (\d{3}) GET /gm)].map((m) => m[1]);
    expect(answers).toHaveLength(ROWS / 100);
    expect(answers.filter((status) => status !== '200')).toEqual([]);
    expect(r.stderr).not.toMatch(/retry \d/);
    const ids = r.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).id);
    expect(ids).toEqual((await storedRows(server, table)).map((row) => row.id));
  }, 300_000);

  it('while the same requests unpaced meet the limit', async () => {
    const token = await tokenFor('unpaced');
    const statuses: number[] = [];
    for (let i = 0; i < ROWS / 100; i += 1) {
      statuses.push(
        (await server.request('GET', `/api/tables/${table}/records?limit=100`, { token })).status,
      );
    }
    expect(statuses.filter((status) => status === 429)).toHaveLength(ROWS / 100 - LIMIT);
  });
});
