// Definition artifacts are bounded before the full parse: a body over the routes' limit is 413, and a
// view with more columns than PostgreSQL allows (or lists too long to parse quickly) is 400, so one
// hostile push cannot hold the server (a 7 MB CREATE VIEW of 800,000 columns once took 83 s).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import {
  MAX_GATE1_CHARACTERS,
  MAX_MAPPING_KEYS,
  MAX_SQL_TOKENS,
  MAX_VIEW_COLUMNS,
} from '../../src/core/artifact-bounds.js';
import { checkArtifactBounds } from '../../src/server/artifact-bounds.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';

let server: TestServer;
let connectorId: string;

/** A view of `ctes` CTEs, each selecting the columns of the one before, and selecting 5 columns itself. */
const deepView = (ctes: number, name = 'analytics_dev.products') => {
  const four = 'id, sku, name, price';
  const parts = Array.from(
    { length: ctes },
    (_, i) => `c${i + 1} AS (SELECT ${four} FROM ${i === 0 ? 'analytics_dev.products' : `c${i}`})`,
  );
  return `CREATE OR REPLACE VIEW ${name} AS\nWITH ${parts.join(',\n')}\nSELECT ${four}, price AS list_price FROM c${ctes}`;
};

const wideView = (columns: number) =>
  `CREATE VIEW analytics_dev.wide AS SELECT ${Array.from({ length: columns }, (_, i) => `c${i}`).join(', ')} FROM analytics_dev.products`;

beforeAll(async () => {
  server = await startTestServer({ jobs: 'manual' });
  connectorId = server.ready.connectors.find((c) => c.name === 'warehouse-dev')?.id ?? '';
});

afterAll(async () => {
  await server?.close();
});

const push = (content: string, filename = 'wide.sql') =>
  server.request('POST', '/api/artifacts', {
    token: server.user('ADMIN').cliToken,
    body: { filename, content, connectorId },
  });

describe('POST /api/artifacts and /api/workspace/definitions bound what they parse', () => {
  it('answers 413 to a 24 MB artifact and registers nothing', async () => {
    const content = `CREATE VIEW analytics_dev.huge AS SELECT id FROM analytics_dev.products\n-- ${'x'.repeat(24 * 1024 * 1024)}`;
    const response = await push(content, 'huge.sql');
    expect(response.status).toBe(413);
    expect(response.body.error.code).toBe('payload_too_large');
    expect(await server.sql("SELECT id FROM gds.tables WHERE name = 'huge'")).toEqual([]);
  });

  it('answers 413 to the 7 MB CREATE VIEW of 800,000 columns on the definitions endpoint too', async () => {
    const definer = (
      await server.issueToken('ADMIN', { name: 'definer', env: '*', scopes: ['workspace:write:definition'] })
    ).tokens.accessToken;
    const response = await server.request('POST', '/api/workspace/definitions', {
      token: definer,
      body: { filename: 'wide.sql', content: wideView(800_000), mimeType: 'sql', connectorId },
    });
    expect(response.status).toBe(413);
  });

  it('refuses a view of more than 1,600 columns with 400 naming the limit', async () => {
    const response = await push(wideView(MAX_VIEW_COLUMNS + 1));
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({
      code: 'artifact_too_large',
      details: { columns: MAX_VIEW_COLUMNS + 1, limit: MAX_VIEW_COLUMNS },
    });
    expect(response.body.error.message).toMatch(/more than 1,600 columns .*PostgreSQL's limit/);
  });

  it('registers a view of 3,000 CTEs that selects 5 columns (the commas between CTEs are not columns)', async () => {
    const response = await push(deepView(3_000), 'products.sql');
    expect(response.body.error).toBeUndefined();
    expect(response.status).toBe(202);
    const [table] = await server.sql<{ columns: number }>(
      "SELECT jsonb_array_length(columns)::int AS columns FROM gds.tables WHERE name = 'products'",
    );
    expect(table?.columns).toBe(5);
  });

  it('refuses a YAML artifact whose lists are too long to parse quickly', async () => {
    const yaml = ['table: wide', 'columns:', ...Array.from({ length: 16_000 }, (_, i) => `  - name: c${i}`)];
    const response = await push(yaml.join('\n'), 'wide.yml');
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('artifact_too_large');
  });
});

describe('POST /api/artifacts/batch bounds each definition as POST /api/artifacts does', () => {
  it('answers an item over the 2 MiB body of the single write with its 413, registering nothing of it', async () => {
    // 2.5 MB of JSON (a model's long column descriptions): POST /api/artifacts answers it 413, and `gds push`
    // refuses the file; the batch (25 MB for 100 items) used to register it.
    const columns = Array.from({ length: 500 }, (_, i) => ({
      name: `c${i}`,
      type: 'text',
      description: 'd'.repeat(5_000),
    }));
    const definition = {
      filename: 'described.json',
      mimeType: 'json',
      content: JSON.stringify({ table: 'described', source: 'analytics_dev.products', columns }),
      connectorId,
    };
    expect(
      (
        await server.request('POST', '/api/artifacts', {
          token: server.user('ADMIN').cliToken,
          body: definition,
        })
      ).status,
    ).toBe(413);
    const response = await server.request('POST', '/api/artifacts/batch', {
      token: server.user('ADMIN').cliToken,
      body: { items: [{ definition }] },
    });
    expect(response.status).toBe(200);
    expect(response.body.results[0]).toMatchObject({
      index: 0,
      tableId: null,
      definition: { status: 413, changed: false, error: { error: { code: 'payload_too_large' } } },
    });
    expect(await server.sql("SELECT id FROM gds.tables WHERE name = 'described'")).toEqual([]);
  });
});

describe('PUT /api/tables/{id}/gate1 bounds the gate1.yml as gds does', () => {
  const putGate1 = (content: string) =>
    server.request('PUT', `/api/tables/${server.table('orders').id}/gate1`, {
      token: server.user('ADMIN').cliToken,
      body: { content },
    });

  it('answers 400 gate1_too_large to a mapping of 12,000 keys within the length limit, storing nothing', async () => {
    const content = `patternChecks: []\nx:\n${Array.from({ length: 12_000 }, (_, i) => `  k${i}: v\n`).join('')}`;
    expect(content.length).toBeLessThan(MAX_GATE1_CHARACTERS);
    const response = await putGate1(content);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({
      code: 'gate1_too_large',
      details: { keys: 12_000, limit: MAX_MAPPING_KEYS },
    });
    const orders = server.table('orders').id;
    expect(await server.sql('SELECT 1 FROM gds.gate1_versions WHERE table_id = $1', [orders])).toEqual([]);
  });

  it('bounds the length with the contract’s own number (gds refuses past the same one)', async () => {
    const contract = parse(
      readFileSync(new URL('../../src/contract/openapi.yaml', import.meta.url), 'utf8'),
    ) as {
      components: { schemas: { Gate1ApplyRequest: { properties: { content: { maxLength: number } } } } };
    };
    expect(contract.components.schemas.Gate1ApplyRequest.properties.content.maxLength).toBe(
      MAX_GATE1_CHARACTERS,
    );
    const response = await putGate1(`# ${'x'.repeat(MAX_GATE1_CHARACTERS)}\npatternChecks: []\n`);
    expect(response.status).toBe(400);
  });
});

describe('checkArtifactBounds', () => {
  const refusal = (filename: string, content: string) => {
    try {
      checkArtifactBounds({ filename, content });
      return undefined;
    } catch (error) {
      return (error as Error).message;
    }
  };

  it('lets a 1,600-column view with function calls, strings and comments through', () => {
    const columns = Array.from({ length: MAX_VIEW_COLUMNS }, (_, i) => `coalesce(c${i}, 0) AS "c,${i}"`);
    const content = `-- a, b, c\nCREATE VIEW s.v AS SELECT ${columns.join(', ')} /* x, y */ FROM s.t WHERE note <> 'a, b'`;
    expect(refusal('v.sql', content)).toBeUndefined();
  });

  it('lets a YAML artifact of 1,600 columns with a few keys each through', () => {
    const columns = Array.from(
      { length: MAX_VIEW_COLUMNS },
      (_, i) => `  - name: c${i}\n    type: text\n    description: 'column ${i}: a, b'`,
    );
    expect(refusal('v.yml', `table: t\nsource: s.t\ncolumns:\n${columns.join('\n')}`)).toBeUndefined();
  });

  it('refuses SQL too long to parse quickly, with no comma in it', () => {
    const sum = Array.from({ length: MAX_SQL_TOKENS / 2 }, () => 'a').join(' + ');
    expect(refusal('v.sql', `CREATE VIEW s.v AS SELECT ${sum} AS x FROM s.t`)).toMatch(
      /more than 100,000 words and symbols/,
    );
    const names = Array.from({ length: MAX_SQL_TOKENS / 2 }, (_, i) => `c${i}`).join(', ');
    expect(refusal('v.sql', `CREATE VIEW s.v (${names}) AS SELECT 1 FROM s.t`)).toMatch(/100,000 words/);
  });

  it('counts the columns a select list selects, not the commas of CTEs, FROM, GROUP BY or arrays', () => {
    expect(refusal('v.sql', deepView(3_000, 's.v'))).toBeUndefined();
    const many = Array.from({ length: 3_000 }, (_, i) => `s.t${i}`).join(', ');
    const clauses = `CREATE VIEW s.v AS SELECT a, ARRAY[${many}] AS b FROM ${many} GROUP BY ${many} ORDER BY ${many}`;
    expect(refusal('v.sql', clauses)).toBeUndefined();
    const wide = Array.from({ length: MAX_VIEW_COLUMNS + 1 }, (_, i) => `c${i}`).join(', ');
    expect(refusal('v.sql', `CREATE VIEW s.v AS WITH x AS (SELECT 1) SELECT ${wide} FROM x`)).toMatch(
      /more than 1,600 columns \(1,601 listed\)/,
    );
    expect(
      refusal('v.sql', `CREATE VIEW s.v AS SELECT a FROM s.t UNION ALL (SELECT ${wide} FROM s.u)`),
    ).toMatch(/1,601 listed/);
    expect(refusal('v.sql', `CREATE VIEW s.v AS SELECT * FROM (SELECT ${wide} FROM s.u) AS w`)).toMatch(
      /1,601 listed/,
    );
  });

  it('counts past a column named after a clause word (AS order, t.limit): it ends no select list', () => {
    // As /work/shared/fixtures/real/sql/redshift_v_get_stored_proc_params.sql names one: `a.arg_num AS order`.
    const rest = Array.from({ length: MAX_VIEW_COLUMNS - 1 }, (_, i) => `c${i}`).join(', ');
    for (const column of [
      'a.arg_num AS order',
      'p.position AS limit',
      'x AS group',
      't.offset',
      't.window AS w',
    ])
      expect(refusal('v.sql', `CREATE VIEW s.v AS SELECT id, ${column}, ${rest} FROM s.t`), column).toMatch(
        /more than 1,600 columns \(1,601 listed\)/,
      );
    expect(
      refusal('v.sql', `CREATE VIEW s.v AS SELECT id, a AS order, ${rest.slice(4)} FROM s.t`),
    ).toBeUndefined();
  });

  it('refuses a YAML mapping of many keys, block or flow (the reader compares keys pairwise)', () => {
    const keys = Array.from({ length: 2_000 }, (_, i) => `k${i}: v`);
    expect(refusal('v.yml', `table: t\n${keys.join('\n')}`)).toMatch(
      /One mapping of the artifact has 2,001 keys/,
    );
    expect(refusal('v.yml', `table: t\nextra: {${keys.join(', ')}}`)).toMatch(/has 2,000 keys/);
  });

  it('refuses a JSON or YAML artifact nested too deep', () => {
    expect(refusal('v.json', `{"table": "t", "x": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`)).toMatch(
      /nests lists and objects 100,001 deep, over the limit of 64/,
    );
    expect(refusal('v.yml', `table: t\nx: ${'['.repeat(65)}`)).toMatch(/65 deep/);
  });

  it('refuses a JSON artifact of too many items', () => {
    const columns = Array.from({ length: 20_000 }, (_, i) => ({ name: `c${i}` }));
    expect(refusal('v.json', JSON.stringify({ table: 't', columns }))).toMatch(
      /more than 15,000 lines and list items/,
    );
  });
});
