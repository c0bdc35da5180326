// A project applied in dev, planned on the staging connector: each model's name is held by its dev table, and
// the plan's refusal names gds env promote where the service would land that promotion. Not where the name the
// promotion takes in staging (nt_model_0_staging: a table name is one per workspace) is held by another table,
// of any environment, nor where the source it takes there is held by another table: the refusal says which
// table holds it, and the promotion itself is refused (409). The plan finds out in the requests it makes
// anyway: the service answers it with the held tables the plan reads to know which it may promote.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../src/core/errors.js';
import { applyPlan } from '../../src/services/project-apply.js';
import { planProject } from '../../src/services/project-plan.js';
import { dbtProjectOf } from '../helpers/dbt-declaration.js';
import { ENGINES } from '../helpers/engines.js';
import type { ProjectServer } from '../helpers/project-server.js';
import { startProjectServer } from '../helpers/project-server.js';
import { needs } from '../helpers/skip.js';

const describeError = (error: unknown) =>
  error instanceof CliError ? error : new CliError(String(error), { exitCode: 1 });

const MODELS = ['nt_model_0', 'nt_model_1', 'nt_model_2'];
const COLUMNS = 'id integer, label text';

describe.each(ENGINES)('promotions onto a taken name or source ($engine)', { timeout: 300_000 }, (engine) => {
  let started: ProjectServer | undefined;
  let staging = '';
  const log: string[] = [];
  const ids = new Map<string, string>();

  beforeAll(async () => {
    if (engine.skip !== undefined) return;
    started = await startProjectServer({
      postgres: engine.postgres,
      relations: Object.fromEntries(MODELS.map((name) => [name, COLUMNS])),
      logger: (line) => log.push(line),
    });
    const { server, client, dev } = started;
    for (const name of MODELS) await server.sql(`CREATE TABLE analytics_staging.${name} (${COLUMNS})`);
    await server.sql(`CREATE TABLE analytics_prod.nt_taker (${COLUMNS})`);
    staging = server.ready.connectors.find((c) => c.environmentLabel === 'staging')?.id ?? '';
    const production = server.ready.connectors.find((c) => c.environmentLabel === 'production')?.id ?? '';
    const plan = await planProject(client, dbtProjectOf('shop', MODELS), { connectorId: dev });
    expect((await applyPlan(client, plan, { describe: describeError })).failed).toEqual([]);
    // Taken by hand: the name nt_model_0's promotion to staging takes (in production: names are the
    // workspace's), and the source nt_model_1's takes there (under another name).
    const push = async (name: string, content: string, connectorId: string) => {
      const response = await server.request('POST', '/api/artifacts', {
        token: server.user('ADMIN').cliToken,
        body: { filename: `${name}.yml`, content, connectorId },
      });
      expect(response.status, JSON.stringify(response.body)).toBe(202);
      ids.set(name, String(response.body.governanceId));
    };
    await push(
      'nt_model_0_staging',
      'table: nt_model_0_staging\nsource: analytics_prod.nt_taker\ncolumns:\n  - name: id\n',
      production,
    );
    await push(
      'nt_copy',
      'table: nt_copy\nsource: analytics_staging.nt_model_1\ncolumns:\n  - name: id\n',
      staging,
    );
    for (const row of await server.sql<{ id: string; name: string }>(
      `SELECT id, name FROM gds.tables WHERE active AND name LIKE 'nt_model_%' AND environment_label = 'dev'`,
    ))
      ids.set(row.name, row.id);
  }, 300_000);

  afterAll(() => started?.close());

  const promote = (name: string) => {
    const { server } = started as ProjectServer;
    return server.request('POST', `/api/tables/${ids.get(name) ?? ''}/promotions`, {
      token: server.user('ADMIN').cliToken,
      body: { to: 'staging' },
    });
  };

  it(
    'names the promotion only where it lands, and says which table holds what it would take',
    needs(engine.skip),
    async () => {
      const { client } = started as ProjectServer;
      log.length = 0;
      const plan = await planProject(client, dbtProjectOf('shop', MODELS), {
        connectorId: staging,
        schema: 'analytics_staging',
      });
      const reasonOf = (name: string) => plan.tables.find((t) => t.table === name)?.reason ?? '';
      expect(plan.tables.map((t) => t.action)).toEqual(['refused', 'refused', 'refused']);
      // The name its promotion takes is held.
      expect(reasonOf('nt_model_0')).not.toContain('gds env promote');
      expect(reasonOf('nt_model_0')).toContain(
        `its promotion to staging would not land: the name nt_model_0_staging it would take there is held by table ${ids.get('nt_model_0_staging') ?? ''}`,
      );
      // The source its promotion takes is held.
      expect(reasonOf('nt_model_1')).not.toContain('gds env promote');
      expect(reasonOf('nt_model_1')).toContain(
        `its promotion to staging would not land: the source analytics_staging.nt_model_1 it would take there is held by table ${ids.get('nt_copy') ?? ''}`,
      );
      // Free: the promotion is named.
      expect(reasonOf('nt_model_2')).toContain(`gds env promote ${ids.get('nt_model_2') ?? ''} --to staging`);
      // What the plan said is what the service does.
      const [taken, held, free] = await Promise.all([
        promote('nt_model_0'),
        promote('nt_model_1'),
        promote('nt_model_2'),
      ]);
      expect(taken.status).toBe(409);
      expect(held.status).toBe(409);
      expect(free.status, JSON.stringify(free.body)).toBe(202);
    },
  );
});
