// `gds quarantine open T` writes DDL whose view is named schema.table, as a SQL artifact
// declares its source, so `gds push <file> --replace T` takes the file back as the definition the service
// holds: "No change", no new version, no --source needed.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

let server: TestServer;
let dir: string;

beforeAll(async () => {
  server = await startTestServer();
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-quarantine-'));
});

afterAll(async () => {
  await server?.close();
});

const gds = (args: string[]) =>
  runInProcess(args, {
    cwd: dir,
    env: {
      GDS_CONFIG_DIR: join(dir, 'config'),
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: server.user('OWNER').cliToken,
    },
  });

describe('quarantine open, then push --replace', () => {
  it('writes a schema-qualified view that push --replace takes back unchanged', async () => {
    // A table registered from a SQL file, with a declared type (a cast) on one column.
    await writeFile(
      join(dir, 'stages.sql'),
      'CREATE OR REPLACE VIEW analytics_dev.stg_pipedrive__stages AS\n' +
        'SELECT stage_id, stage_name::text AS stage_name, pipeline_id FROM raw.pipedrive_stages;\n',
    );
    const registered = await gds(['push', 'stages.sql', '--json']);
    expect(registered.code, registered.stderr).toBe(0);
    const id = JSON.parse(registered.stdout.trim().split('\n')[0] ?? '{}') as {
      tableId?: string;
      id?: string;
    };
    const tableId = id.tableId ?? id.id ?? '';
    expect(tableId).toMatch(/^tbl_/);
    const [before] = await server.sql('SELECT definition_version FROM gds.tables WHERE id = $1', [tableId]);

    const opened = await gds(['quarantine', 'open', 'stg_pipedrive__stages', '-o', 'opened.sql']);
    expect(opened.code, opened.stderr).toBe(0);
    expect(opened.stdout).toMatch(/opened\.sql\n$/);
    expect(opened.stderr).toMatch(/^✓ Wrote the DDL of stg_pipedrive__stages \(tbl_\w+, QUARANTINED\)\.\n$/);
    const ddl = await readFile(join(dir, 'opened.sql'), 'utf8');
    expect(ddl).toMatch(/^CREATE OR REPLACE VIEW "analytics_dev"\."stg_pipedrive__stages" AS\n/);
    expect(ddl).toContain('"stage_name"::text AS "stage_name"');

    const preview = await gds(['push', 'opened.sql', '--replace', tableId, '--dry-run', '--json']);
    expect(preview.code, preview.stderr).toBe(0);
    expect(JSON.parse(preview.stdout.trim()), preview.stdout).toMatchObject({ changed: false });

    const pushed = await gds(['push', 'opened.sql', '--replace', tableId]);
    expect(pushed).toMatchObject({ code: 0 });
    expect(pushed.stderr).toContain(
      `✓ No change: ${tableId} is already definition v${before?.definition_version}`,
    );
    const [after] = await server.sql('SELECT definition_version, source FROM gds.tables WHERE id = $1', [
      tableId,
    ]);
    expect(after).toMatchObject({
      definition_version: before?.definition_version,
      source: 'analytics_dev.stg_pipedrive__stages',
    });
  });

  it('names in a comment what SQL cannot declare (a required column), with the way to keep it', async () => {
    await writeFile(
      join(dir, 'products.yml'),
      'table: products\nsource: analytics_dev.products\ncolumns:\n' +
        '  - { name: id, type: text, required: true }\n  - { name: price, type: numeric }\n',
    );
    const registered = await gds(['push', 'products.yml']);
    expect(registered.code, registered.stderr).toBe(0);
    const opened = await gds(['quarantine', 'open', 'products', '-o', '-']);
    expect(opened.code, opened.stderr).toBe(0);
    expect(opened.stdout).toBe(
      '-- Declared beyond SQL (required, references, min/max) for id: a YAML or JSON definition keeps them.\n' +
        'CREATE OR REPLACE VIEW "analytics_dev"."products" AS\nSELECT\n' +
        '  "id"::text AS "id",\n  "price"::numeric AS "price"\nFROM "analytics_dev"."products";\n',
    );
  });
});
