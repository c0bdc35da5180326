// `gds recertify --run-results` of a dbt project of more than 500 models, against the in-process reference
// server: the service takes at most 500 tables per signal (spec §4.8, 400 too_many_tables), and a dbt run's
// run_results.json cannot be split by the person running it, so gds sends the run in parts of at most 500
// rebuilt tables and answers with the whole run's outcomes, as one signal would.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, staticToken } from '../../src/client/index.js';
import type { ApiClient } from '../../src/client/index.js';
import { ApiError } from '../../src/client/errors.js';
import { CliError, ExitCode } from '../../src/core/errors.js';
import { recertify } from '../../src/services/recertification.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';

let server: TestServer;
let client: ApiClient;
let folder: string;
const governed = ['orders_0', 'orders_599', 'orders_1199'];

const MODELS = 1_200;
const name = (i: number) => `orders_${i}`;

beforeAll(async () => {
  server = await startTestServer();
  const dev = server.ready.connectors.find((c) => c.name === 'warehouse-dev')?.id;
  for (const table of governed) {
    await server.sql(`CREATE TABLE analytics_dev.${table} (id integer)`);
    const response = await server.request('POST', '/api/artifacts', {
      token: server.user('ADMIN').cliToken,
      body: {
        filename: `${table}.yml`,
        content: `table: ${table}\nsource: analytics_dev.${table}\ncolumns:\n  - name: id\n`,
        connectorId: dev,
      },
    });
    expect(response.status).toBe(202);
  }
  const issued = await server.issueToken('ADMIN', {
    name: 'ci-recertify',
    env: 'dev',
    scopes: ['workspace:write:recertify'] as never,
  });
  client = createApiClient({
    baseUrl: server.url,
    auth: staticToken(issued.tokens.accessToken),
    sleep: async () => {},
    logger: () => {},
  });
  folder = await mkdtemp(join(tmpdir(), 'gds-recertify-large-'));
  const results = [];
  for (let i = 0; i < MODELS; i++) {
    results.push({
      status: 'success',
      unique_id: `model.shop.${name(i)}`,
      message: 'CREATE TABLE',
      adapter_response: {},
      relation_name: `"dev"."analytics_dev"."${name(i)}"`,
    });
    results.push({ status: 'pass', unique_id: `test.shop.not_null_${name(i)}_id`, relation_name: null });
  }
  const run = {
    metadata: {
      dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v6.json',
      dbt_version: '1.8.0',
      invocation_id: 'inv-1',
    },
    results,
    elapsed_time: 60,
    args: { which: 'build' },
  };
  const nodes = Object.fromEntries(
    Array.from({ length: MODELS }, (_, i) => [
      `model.shop.${name(i)}`,
      {
        unique_id: `model.shop.${name(i)}`,
        resource_type: 'model',
        database: 'dev',
        schema: 'analytics_dev',
        name: name(i),
        alias: name(i),
        checksum: { name: 'sha256', checksum: `c${i}` },
      },
    ]),
  );
  const manifest = {
    metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/manifest/v12.json' },
    nodes,
  };
  await writeFile(join(folder, 'run_results.json'), JSON.stringify(run));
  await writeFile(join(folder, 'manifest.json'), JSON.stringify(manifest));
});

afterAll(async () => {
  await client?.close();
  await server?.close();
});

describe('recertify a run of more than 500 rebuilt tables', () => {
  it('signals every table of the run and answers for the whole run', async () => {
    const response = await recertify(client, {
      runResults: join(folder, 'run_results.json'),
      manifest: join(folder, 'manifest.json'),
      environmentLabel: 'dev',
    });
    expect(response.environmentLabel).toBe('dev');
    expect(response.submitted).toBe(MODELS);
    expect(response.governed).toBe(governed.length);
    expect(response.outcomes.map((o) => o.table)).toEqual(Array.from({ length: MODELS }, (_, i) => name(i)));
    expect(response.outcomes.filter((o) => o.outcome !== 'not_governed').map((o) => o.table)).toEqual(
      governed,
    );
    // Each governed table heard of the rebuild once, with the run's invocation in its audit event.
    const signals = await server.sql<{ name: string; count: string }>(
      `SELECT t.name, count(*)::text AS count FROM gds.audit_log e JOIN gds.tables t ON t.id = e.table_id
        WHERE e.details->>'submittedAs' IS NOT NULL GROUP BY t.name ORDER BY t.name`,
    );
    expect(signals).toEqual([...governed].sort().map((table) => ({ name: table, count: '1' })));
  });

  it('--tables of more than 500 names: signals of at most 500, answered as one for every name', async () => {
    const names = Array.from({ length: MODELS }, (_, i) => name(MODELS - 1 - i));
    const sizes: number[] = [];
    const counting = {
      recertification: {
        ...client.recertification,
        signal: async (body: Parameters<ApiClient['recertification']['signal']>[0], options?: object) => {
          sizes.push(body.tables?.length ?? 0);
          return client.recertification.signal(body, options);
        },
      },
    } as unknown as ApiClient;
    const response = await recertify(counting, { tables: names, environmentLabel: 'dev' });
    expect(sizes).toEqual([500, 500, 200]);
    expect(response.submitted).toBe(MODELS);
    expect(response.outcomes.map((o) => o.table)).toEqual(names);
    expect(response.outcomes.filter((o) => o.outcome !== 'not_governed').map((o) => o.table)).toEqual(
      [...governed].reverse(),
    );
  });

  it('a part refused after the first says the parts before it were signalled, and which were not sent', async () => {
    // The service answers the first part and refuses the second (a rate limit, an outage, a token revoked).
    let calls = 0;
    const failing = {
      recertification: {
        ...client.recertification,
        signal: async (body: Parameters<ApiClient['recertification']['signal']>[0]) => {
          calls += 1;
          if (calls === 1) return client.recertification.signal(body);
          throw new ApiError({
            status: 429,
            code: 'rate_limited',
            message: 'Too many requests',
            method: 'POST',
            url: `${server.url}/api/recertify`,
          });
        },
      },
    } as unknown as ApiClient;
    const error = await recertify(failing, {
      runResults: join(folder, 'run_results.json'),
      manifest: join(folder, 'manifest.json'),
      environmentLabel: 'dev',
    }).catch((e: unknown) => e);
    expect(calls).toBe(2);
    expect(error).toBeInstanceOf(CliError);
    const failure = error as CliError;
    expect(failure.exitCode).toBe(ExitCode.RateLimited);
    expect(failure.code).toBe('rate_limited');
    expect(failure.message).toContain('Part 2 of the 3 signals of this run failed (Too many requests)');
    expect(failure.message).toContain(
      '500 of 1200 rebuilt tables were signalled (1 governed); 700 were not.',
    );
    const details = failure.details as {
      partsSignalled: number;
      submitted: number;
      outcomes: unknown[];
      signalled: string[];
      unconfirmed: string[];
      notSent: string[];
    };
    expect(details.partsSignalled).toBe(1);
    expect(details.submitted).toBe(500);
    expect(details.outcomes).toHaveLength(500);
    // The service answered part 2 with an error: its signal was rolled back, so it was not applied either.
    expect(details.signalled).toEqual(Array.from({ length: 500 }, (_, i) => `model.shop.${name(i)}`));
    expect(details.unconfirmed).toEqual([]);
    expect(details.notSent).toEqual(Array.from({ length: 700 }, (_, i) => `model.shop.${name(i + 500)}`));
  });

  it("a gateway that answers 502/504 in the service's stead leaves the part unconfirmed, not unsent", async () => {
    // A proxy in front of the service gave up on part 2 (its own body, not the service's error): the service
    // may still have applied it, so the part is reported as perhaps signalled, never as not sent.
    for (const status of [502, 504]) {
      const failing = {
        recertification: {
          ...client.recertification,
          signal: async (body: Parameters<ApiClient['recertification']['signal']>[0]) => {
            const run = body.runResults as unknown as { results: Array<{ unique_id: string }> };
            if (!run.results.some((r) => r.unique_id === `model.shop.${name(500)}`))
              return client.recertification.signal(body);
            throw new ApiError({
              status,
              code: `http_${status}`,
              message: `The service answered ${status} Gateway Timeout`,
              method: 'POST',
              url: `${server.url}/api/workspace/recertify`,
            });
          },
        },
      } as unknown as ApiClient;
      const error = await recertify(failing, {
        runResults: join(folder, 'run_results.json'),
        manifest: join(folder, 'manifest.json'),
        environmentLabel: 'dev',
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CliError);
      const failure = error as CliError;
      expect(failure.exitCode).toBe(ExitCode.Unavailable);
      expect(failure.message).toContain(
        'the 500 of part 2 may have been (the answer was lost); 200 were not.',
      );
      const details = failure.details as { signalled: string[]; unconfirmed: string[]; notSent: string[] };
      expect(details.signalled).toEqual(Array.from({ length: 500 }, (_, i) => `model.shop.${name(i)}`));
      expect(details.unconfirmed).toEqual(
        Array.from({ length: 500 }, (_, i) => `model.shop.${name(i + 500)}`),
      );
      expect(details.notSent).toEqual(Array.from({ length: 200 }, (_, i) => `model.shop.${name(i + 1000)}`));
    }
  });
});
