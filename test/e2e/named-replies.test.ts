// A new user names tables by name (`orders`, `crm_contacts`): every reply names them back that way, never
// by the id the name resolved to (docs/output.md), and the next step suggested uses the name and the file
// the user gave. gate apply checks the rules' column names against the table before sending anything.
// gds runs in the test process (runInProcess).
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import { PRICE_POSITIVE_GATE, PRODUCTS_DEFINITION } from './products.js';

let server: TestServer;
let dir: string;
const file = (name: string) => join(dir, name);

async function gds(args: string[], stdin?: string, debug = false): Promise<CliResult> {
  return runInProcess(args, {
    env: {
      ...(debug ? { GDS_DEBUG: '1' } : {}),
      GDS_CONFIG_DIR: join(dir, 'config'),
      GDS_SECRET_STORAGE: 'file',
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: server.user('OWNER').cliToken,
    },
    ...(stdin === undefined ? {} : { input: stdin }),
  });
}

/** The gate1.yml versions the service holds for a table. */
async function gateVersions(tableId: string): Promise<number> {
  const [row] = await server.sql('SELECT count(*)::int AS n FROM gds.gate1_versions WHERE table_id = $1', [
    tableId,
  ]);
  return Number(row?.n);
}

beforeAll(async () => {
  server = await startTestServer();
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-named-'));
  await writeFile(file('products.yml'), PRODUCTS_DEFINITION);
  await writeFile(file('price.yml'), PRICE_POSITIVE_GATE);
  await writeFile(file('invalid.yml'), 'customPredicates: 5\n');
  await writeFile(
    file('gate1.yml'),
    'customPredicates:\n  - name: discount_small\n    sql: discount_pct < 50\n    severity: HARD_FAIL\n',
  );
});

afterAll(async () => {
  await server?.close();
});

describe('replies name the table as the user named it', () => {
  it('gate suggest | gate apply -f -, run twice: "No change" names orders', async () => {
    const suggested = await gds(['gate', 'suggest', 'orders']);
    expect(suggested.code, suggested.stderr).toBe(0);
    const first = await gds(['gate', 'apply', 'orders', '-f', '-'], suggested.stdout);
    expect(first.code, first.stderr).toBe(0);
    const again = await gds(['gate', 'apply', 'orders', '-f', '-'], suggested.stdout);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toMatch(/No change: gate1\.yml of orders is already v\d+\./);
    expect(again.stderr).not.toContain('tbl_');
  });

  it('gate get -o: "Wrote … of orders"', async () => {
    const got = await gds(['gate', 'get', 'orders', '-o', file('g.yml')]);
    expect(got.code, got.stderr).toBe(0);
    expect(got.stderr).toMatch(/Wrote gate1\.yml v\d+ of orders to /);
    expect(got.stderr).not.toContain('tbl_');
  });

  it('push --replace products --dry-run of the same file: "No change: products is already …"', async () => {
    const pushed = await gds(['push', file('products.yml'), '--json']);
    expect(pushed.code, pushed.stderr).toBe(0);
    const preview = await gds(['push', file('products.yml'), '--replace', 'products', '--dry-run']);
    expect(preview.code, preview.stderr).toBe(0);
    expect(preview.stderr).toMatch(/No change: products is already definition v1/);
    expect(preview.stderr).not.toContain('tbl_');
  });

  it('records get of a record the table lacks: exit 5, names crm_contacts, suggests records list', async () => {
    const got = await gds(['records', 'get', 'crm_contacts', 'rec_nope']);
    expect(got.code).toBe(5);
    expect(got.stderr).toContain('Record rec_nope does not exist in table crm_contacts.');
    expect(got.stderr).toContain('gds records list crm_contacts');
    expect(got.stderr).not.toContain('tbl_');
  });

  it('gate apply of an invalid file: the check suggested names orders and the file given', async () => {
    const applied = await gds(['gate', 'apply', 'orders', '-f', file('invalid.yml')]);
    expect(applied.code).toBe(2);
    expect(applied.stderr).toContain(`gds gate validate orders -f ${file('invalid.yml')}`);
  });
});

describe('gate apply checks column names against the table first', () => {
  it('rules naming a column orders lacks: exit 2 as gate validate, no PUT sent, nothing stored', async () => {
    const tableId = server.table('orders').id;
    const before = await gateVersions(tableId);
    const validated = await gds(['gate', 'validate', 'orders', '-f', file('gate1.yml')]);
    expect(validated.code).toBe(2);
    // GDS_DEBUG=1 logs every request gds sends.
    const applied = await gds(['gate', 'apply', 'orders', '-f', file('gate1.yml')], undefined, true);
    expect(applied.code, applied.stderr).toBe(2);
    expect(applied.stderr).toMatch(/^gds: → GET /m);
    expect(applied.stderr).not.toMatch(/^gds: → PUT /m);
    const said = applied.stderr.replace(/^gds: .*\n/gm, '');
    expect(said).toContain('the table has no column "discount_pct"');
    expect(said).toContain(`gds gate validate orders -f ${file('gate1.yml')}`);
    expect(await gateVersions(tableId)).toBe(before);
  });

  it('rules whose columns the table has: applied', async () => {
    const applied = await gds(['gate', 'apply', 'products', '-f', file('price.yml')]);
    expect(applied.code, applied.stderr).toBe(0);
    expect(applied.stderr).toContain('Applied');
  });
});
