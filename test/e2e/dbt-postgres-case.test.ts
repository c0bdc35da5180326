// `gds plan` of a PostgreSQL project without a catalog: the tests of a column documented unquoted (Email, which
// dbt's SQL reads as email) that the warehouse object holds only as "Email" error in dbt, so they are not
// mapped, as with a catalog; the column is registered as the warehouse names it. Run in the test process.
import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverEnv } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import { columns, genericTest, manifest, model } from '../core/dbt/helpers.js';

let server: TestServer;
let dir: string;
let connector: string;

beforeAll(async () => {
  server = await startTestServer();
  connector = server.ready.connectors.find((c) => c.environmentLabel === 'dev')?.id ?? '';
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-dbt-pg-case-'));
  await mkdir(join(dir, 'target'));
  await writeFile(
    join(dir, 'target', 'manifest.json'),
    JSON.stringify(
      manifest(
        model('case_people', { columns: columns({ id: 'integer', Email: 'text' }) }),
        genericTest('not_null', 'model.shop.case_people', {}, { column: 'id' }),
        genericTest('not_null', 'model.shop.case_people', {}, { column: 'Email' }),
      ),
    ),
  );
  // The model's SQL created the column quoted ("Email"): dbt's tests, which write email, error on it.
  await server.sql('CREATE TABLE IF NOT EXISTS analytics_dev.case_people (id integer, "Email" text)');
});

afterAll(async () => {
  await server?.close();
});

describe('gds plan on PostgreSQL without a catalog', () => {
  it('a test dbt cannot run (its column held only in another case) is not mapped, as with a catalog', async () => {
    const r = await runInProcess(
      ['plan', '--dbt', dir, '--connector', connector, '--schema', 'analytics_dev', '--json'],
      { env: serverEnv(server.url, server.user('ADMIN').cliToken, join(dir, 'config')) },
    );
    expect(r.code).toBe(0);
    const lines = r.stdout
      .split('\n')
      .filter((l) => l !== '')
      .map(
        (l) =>
          JSON.parse(l) as {
            table?: string;
            mappedTests?: Array<{ test: string }>;
            notMappedTests?: Array<{ test: string; reason: string }>;
            rules?: string[];
          },
      );
    const people = lines.find((l) => l.table === 'case_people');
    expect(people?.mappedTests?.map((t) => t.test)).toEqual(['test.shop.not_null_case_people_id.abc']);
    expect(people?.notMappedTests).toEqual([
      {
        test: 'test.shop.not_null_case_people_Email.abc',
        reason: expect.stringMatching(
          /reads it as email; the table's column is "Email" \(another case\), so dbt's test errors/,
        ) as string,
      },
    ]);
    expect(people?.rules?.join('\n')).not.toMatch(/Email: (required|never NULL)/);
    expect(r.stderr).toMatch(/case_people: column email -> Email: .* error, and are not mapped/);
  });
});
