// A narrowed GET /api/held-tables read in pages (as `gds plan` reads its project's tables) answers each
// table the filter finds once, in the list's order, whatever the page size: each part of the filter keeps only
// the tables after the page's cursor (src/server/governance/tables.ts, heldIds), on both engines. Tables of
// each part (a project, a project prefix, a file prefix, a name, a slug, a source's object, and one found by
// two parts at once) are interleaved by creation time with tables the filter leaves out.
import { describe, expect, it } from 'vitest';
import { ENGINES, useEngineServer } from '../helpers/engines.js';
import type { TestServer } from '../helpers/server.js';
import { copyTable } from '../helpers/table-copies.js';
import { needs } from '../helpers/skip.js';

/** Copies of the seeded `customers` in dev, each set interleaved with the others by its `created_at`. */
async function arrange(server: TestServer): Promise<void> {
  const template = server.table('customers').id;
  const dev = `'dev'`;
  const sets: Array<[string, Record<string, string>]> = [
    ['own', { project: `'shop'` }],
    ['prefixed', { project: `'shop@dev_' || g` }],
    [
      'byfile',
      {
        project: 'NULL',
        artifact: `jsonb_build_object('table', 'byfile_' || g, 'source', source, 'columns', columns, 'fileName', 'dbt--shop--m' || g || '.yml')`,
      },
    ],
    ['named', { project: `'other'` }],
    ['slugged', { project: 'NULL' }],
    ['sourced', { project: 'NULL', source: `'analytics_dev.sourced_obj_' || g` }],
    ['twice', { project: `'shop'` }],
    ['left', { project: `'other'` }],
  ];
  for (const [at, [prefix, overrides]] of sets.entries())
    await copyTable(server, template, 6, prefix, {
      environment_label: dev,
      created_at: `created_at + interval '1 day' + (g * 8 + ${at}) * interval '1 millisecond'`,
      ...overrides,
    });
}

/** The filter's query: the sets above found by each part, `twice_3` by its project and its name. */
const FILTER =
  'project=shop&projectPrefix=shop%40&filePrefix=dbt--shop--' +
  ['named_2', 'named_5', 'SLUGGED-4', 'sourced_obj_1', 'twice_3', 'left_none']
    .map((n) => `&name=${n}`)
    .join('');

describe.each(ENGINES)('a narrowed held-tables read in pages on $engine', (engine) => {
  const server = useEngineServer(engine, { jobs: 'manual' });

  /** Every page of the read at `limit`: the tables' names in the order answered, and the pages read. */
  const walk = async (limit: number, filter = FILTER): Promise<{ names: string[]; pages: number }> => {
    const names: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const after: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
      const page = await server().request(
        'GET',
        `/api/held-tables?environment=dev&limit=${limit}&${filter}${after}`,
        { token: server().user('OWNER').cliToken },
      );
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      const body = page.body as { tables: Array<{ name: string }>; nextCursor: string | null };
      names.push(...body.tables.map((t) => t.name));
      cursor = body.nextCursor;
      pages += 1;
    } while (cursor !== null);
    return { names, pages };
  };

  it(
    'answers every table the filter finds once, in the list’s order, at any page size',
    needs(engine.skip),
    async () => {
      await arrange(server());
      const whole = await walk(1000);
      expect(whole.pages).toBe(1);
      const expected = [
        ...[1, 2, 3, 4, 5, 6].flatMap((g) => [`own_${g}`, `prefixed_${g}`, `byfile_${g}`]),
        'named_2',
        'named_5',
        'slugged_4',
        'sourced_1',
        ...[1, 2, 3, 4, 5, 6].map((g) => `twice_${g}`),
      ];
      expect([...whole.names].sort()).toEqual([...expected].sort());
      for (const limit of [1, 2, 5, 7]) {
        const paged = await walk(limit);
        expect(paged.names, `limit ${limit}`).toEqual(whole.names);
        expect(paged.pages, `limit ${limit}`).toBe(Math.ceil(whole.names.length / limit));
      }
    },
  );

  it(
    'answers tables created at the same instant, found by different parts, once each at any page size',
    needs(engine.skip),
    async () => {
      // Seven tables of one created_at (a batch's insert): a page ending inside them goes on by their ids, so a
      // part that kept only the tables created after the cursor's instant would lose the rest of the batch.
      const template = server().table('customers').id;
      const tied = { environment_label: `'dev'`, created_at: `created_at + interval '2 days'` };
      await copyTable(server(), template, 5, 'tieda', { ...tied, project: `'tied'` });
      await copyTable(server(), template, 5, 'tiedb', { ...tied, project: 'NULL' });
      const filter = 'project=tied&name=tiedb_4&name=TIEDB-2';
      const whole = await walk(1000, filter);
      expect(whole.names).toEqual([
        'tieda_1',
        'tieda_2',
        'tieda_3',
        'tieda_4',
        'tieda_5',
        'tiedb_2',
        'tiedb_4',
      ]);
      for (const limit of [1, 2, 3])
        expect((await walk(limit, filter)).names, `limit ${limit}`).toEqual(whole.names);
    },
  );

  it(
    'answers only the environment’s active tables when the filter finds others before them, at any page size',
    needs(engine.skip),
    async () => {
      // Staging's tables and dropped ones that every part of the filter finds, created before dev's: a page
      // that took its first tables before leaving those out would come short and end the read early.
      const template = server().table('customers').id;
      const at = (offset: number) =>
        `created_at + interval '3 days' + (g + ${offset}) * interval '1 millisecond'`;
      const found = (prefix: string, g: number) => [
        `name=${prefix}_${g}`,
        `name=${prefix.toUpperCase()}-${g}`,
      ];
      await copyTable(server(), template, 3, 'elsewhere', {
        environment_label: `'staging'`,
        project: `'away'`,
        created_at: at(0),
      });
      await copyTable(server(), template, 3, 'dropped', {
        active: 'false',
        project: `'away'`,
        created_at: at(3),
      });
      await copyTable(server(), template, 3, 'loose', {
        environment_label: `'staging'`,
        project: 'NULL',
        source: `'analytics_dev.here_obj_' || g`,
        created_at: at(6),
      });
      await copyTable(server(), template, 4, 'here', {
        environment_label: `'dev'`,
        project: `'away'`,
        created_at: at(10),
      });
      const filter = [
        'project=away',
        ...found('elsewhere', 1),
        ...found('dropped', 2),
        'name=here_obj_3',
      ].join('&');
      const whole = await walk(1000, filter);
      expect(whole.names).toEqual(['here_1', 'here_2', 'here_3', 'here_4']);
      for (const limit of [1, 2, 3]) {
        const paged = await walk(limit, filter);
        expect(paged.names, `limit ${limit}`).toEqual(whole.names);
        expect(paged.pages, `limit ${limit}`).toBe(Math.ceil(whole.names.length / limit));
      }
    },
  );
});
