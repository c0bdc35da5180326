// The dashboard's tables page at 100,000 tables, on PGlite and (with GDS_TEST_DATABASE_URL) PostgreSQL:
// time and bytes of the first page, the next one, the last one, a filter matching a few tables (by
// environment) and one matching none (by state); then `GET /api/tables?limit=1` while three people load the
// page at once (it must not wait for them). Budget: 200 ms and 1 MB a page. The server runs in this process.
import { performance } from 'node:perf_hooks';
import { countText } from '../../src/core/count-text.js';
import { encodeListCursor } from '../../src/server/list-cursor.js';
import type { TestServer } from '../../test/helpers/server.js';
import { largeWorkspace } from './lib/large-workspace.js';
import { median } from './lib/measure.js';
import type { BenchModule, BenchRow } from './types.js';

const TABLES = 100_000;
const ROUNDS = 5;

async function signIn(server: TestServer): Promise<string> {
  const response = await fetch(`${server.origin}/dashboard/sign-in`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: server.origin,
      'sec-fetch-site': 'same-origin',
    },
    body: new URLSearchParams({ email: server.user('OWNER').email }).toString(),
    redirect: 'manual',
  });
  if (response.status !== 303) throw new Error(`dashboard sign-in answered ${response.status}`);
  return (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
}

async function load(url: string, cookie: string): Promise<{ ms: number; bytes: number; text: string }> {
  const started = performance.now();
  const response = await fetch(url, { headers: { cookie } });
  const text = await response.text();
  const ms = performance.now() - started;
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
  return { ms, bytes: Buffer.byteLength(text), text };
}

async function pageRow(
  engine: string,
  name: string,
  url: string,
  cookie: string,
  expectRows: (count: number) => boolean,
): Promise<BenchRow> {
  const runs = [];
  for (let i = 0; i < ROUNDS; i += 1) runs.push(await load(url, cookie));
  const rows = Math.max(0, (runs[0]?.text.split('<section id="tables">')[1] ?? '').split('<tr>').length - 2);
  if (!expectRows(rows)) throw new Error(`${name}: ${rows} table rows`);
  const ms = median(runs.map((r) => r.ms));
  const bytes = runs[0]?.bytes ?? 0;
  process.stderr.write(`dashboard ${engine} ${name}: ${median(runs.map((r) => r.ms)).toFixed(0)} ms\n`);
  return {
    section: 'dashboard',
    name: `${engine}: ${name}`,
    value: `${ms.toFixed(0)} ms`,
    note: `${(bytes / 1024).toFixed(0)} KB, ${rows} rows, median of ${ROUNDS}; budget 200 ms and 1 MB: ${ms <= 200 && bytes <= 1_000_000 ? 'within' : 'OVER'}`,
  };
}

async function measure(engine: 'PGlite' | 'PostgreSQL'): Promise<BenchRow[]> {
  const { server, template, made } = await largeWorkspace(
    TABLES,
    engine === 'PostgreSQL' ? 'postgres' : 'pglite',
  );
  try {
    const cookie = await signIn(server);
    const home = `${server.origin}/dashboard`;
    await load(home, cookie);
    const [last] = await server.sql<{ created_key: string; id: string }>(
      `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_key, id
         FROM gds.tables WHERE active ORDER BY created_at DESC, id DESC OFFSET 50 LIMIT 1`,
    );
    const lastPage = encodeListCursor({ createdAt: last?.created_key ?? '', id: last?.id ?? '' });
    const first = await load(home, cookie);
    const next = /<a rel="next" href="\/dashboard\?cursor=([^"]+)"/.exec(first.text)?.[1];
    if (next === undefined) throw new Error('the first page has no next link');
    const otherEnv = server.ready.tables.find(
      (t) => t.environmentLabel !== template.environmentLabel,
    )?.environmentLabel;
    const rows: BenchRow[] = [
      await pageRow(engine, 'first page', home, cookie, (n) => n === 100),
      await pageRow(engine, 'second page', `${home}?cursor=${next}`, cookie, (n) => n === 100),
      await pageRow(engine, 'last page', `${home}?cursor=${lastPage}`, cookie, (n) => n === 50),
      await pageRow(
        engine,
        `env=${otherEnv} (a few tables)`,
        `${home}?env=${otherEnv}`,
        cookie,
        (n) => n > 0,
      ),
      await pageRow(engine, 'state=CORE (none)', `${home}?state=CORE`, cookie, (n) => n === 0),
    ];
    // Another person's API call while three load the heaviest page at once.
    const token = server.user('MEMBER').cliToken;
    const apiCall = async () => {
      const t = performance.now();
      const answer = await server.request('GET', '/api/tables?limit=1', { token });
      if (answer.status !== 200) throw new Error(`GET /api/tables answered ${answer.status}`);
      return performance.now() - t;
    };
    await apiCall();
    const aloneRuns: number[] = [];
    for (let i = 0; i < ROUNDS; i += 1) aloneRuns.push(await apiCall());
    const alone = median(aloneRuns);
    const views = Promise.all([0, 1, 2].map(() => load(`${home}?state=CORE`, cookie)));
    const during: number[] = [];
    for (let i = 0; i < 3; i += 1) during.push(await apiCall());
    const viewed = await views;
    rows.push({
      section: 'dashboard',
      name: `${engine}: GET /api/tables?limit=1 during 3 page views`,
      value: `${median(during).toFixed(0)} ms`,
      note: `alone ${alone.toFixed(0)} ms; the three views ${viewed.map((v) => v.ms.toFixed(0)).join(', ')} ms`,
    });
    return rows.map((row) => ({
      ...row,
      note: `${row.note}; ${countText(TABLES)} tables (made in ${made} s)`,
    }));
  } finally {
    await server.close();
  }
}

export const run: BenchModule = async () => [
  ...(await measure('PGlite')),
  ...(process.env.GDS_TEST_DATABASE_URL ? await measure('PostgreSQL') : []),
];
