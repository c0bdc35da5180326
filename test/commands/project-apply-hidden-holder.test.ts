// gds apply by a person who cannot see the table holding a model's name (a table of an environment outside
// their scope): the plan, which lists only what the person may read, creates the table, and the service's 409
// names no holder. apply reports that refusal (exit 6, the service's reason: a table you cannot see holds the
// name) and writes nothing; it no longer reads the status of the holder the 409 named (403 to this person).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, staticToken } from '../../src/client/index.js';
import type { ApiClient } from '../../src/client/index.js';
import { ApiError } from '../../src/client/errors.js';
import { CliError } from '../../src/core/errors.js';
import { applyPlan } from '../../src/services/project-apply.js';
import { planProject } from '../../src/services/project-plan.js';
import { dbtProjectOf } from '../helpers/dbt-declaration.js';
import type { ProjectServer } from '../helpers/project-server.js';
import { startProjectServer } from '../helpers/project-server.js';

const describeError = (error: unknown) =>
  error instanceof CliError ? error : new CliError(String(error), { exitCode: 1 });

describe('apply of a model whose name a table the person cannot see holds', { timeout: 300_000 }, () => {
  let started: ProjectServer | undefined;
  let member: ApiClient | undefined;

  beforeAll(async () => {
    // customers_production is the seed's production table; the member sees dev only.
    started = await startProjectServer({ relations: { customers_production: 'id integer, label text' } });
    member = createApiClient({
      baseUrl: started.server.url,
      auth: staticToken(started.server.user('MEMBER').cliToken),
      sleep: async () => {},
      logger: () => {},
    });
  });

  afterAll(async () => {
    await member?.close();
    await started?.close();
  });

  it('fails with exit 6 and the service’s words, naming no id', async () => {
    const { server, dev } = started as ProjectServer;
    const client = member as ApiClient;
    const held = server.table('customers_production').id;
    const plan = await planProject(client, dbtProjectOf('shop', ['customers_production']), {
      connectorId: dev,
    });
    expect(plan.tables.map((t) => t.action)).toEqual(['create']);
    const raw: unknown[] = [];
    const summary = await applyPlan(client, plan, {
      describe: (error) => {
        raw.push(error);
        return describeError(error);
      },
    });
    expect(summary.failed).toHaveLength(1);
    expect(summary.failed[0]?.step).toBe('register');
    // The service's 409 itself (gds's session mapping makes it exit 6, the reason under --json's details).
    const [error] = raw;
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 409, code: 'name_conflict' });
    const details = (error as ApiError).details as Record<string, unknown>;
    expect(details.existingId).toBeUndefined();
    expect(details.replaceable).toBe(false);
    expect(String(details.reason)).toContain('a table you cannot see');
    expect(JSON.stringify(details)).not.toContain(held);
    const tables = await server.sql(
      `SELECT id FROM gds.tables WHERE active AND name = 'customers_production'`,
    );
    expect(tables).toEqual([{ id: held }]);
  });
});
