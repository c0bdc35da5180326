// gds apply writes a project's tables in batches (src/services/project-batch.ts, POST /api/artifacts/batch), on
// PGlite and PostgreSQL: a first apply of many models stays within a low rate limit without one 429, every
// table registered with its gate1.yml and contract intent, and the same apply again writes nothing; batches of
// large definitions are cut to stay within the service's request body limit; a table whose batch step met a
// deadlock is written by its single writes, from that step when an earlier one was stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_BODY_LIMIT_BYTES } from '../../src/core/artifact-bounds.js';
import { CliError } from '../../src/core/errors.js';
import type { ApiClient } from '../../src/client/index.js';
import { applyPlan } from '../../src/services/project-apply.js';
import { planProject } from '../../src/services/project-plan.js';
import { dbtDeclaration, dbtProjectOf } from '../helpers/dbt-declaration.js';
import { ENGINES } from '../helpers/engines.js';
import type { ProjectServer } from '../helpers/project-server.js';
import { startProjectServer } from '../helpers/project-server.js';
import type { TestServer } from '../helpers/server.js';
import { needs } from '../helpers/skip.js';

const MODELS = 60;
/** Requests a minute per token: a first apply one table at a time would need five a model. */
const RATE_LIMIT = 30;

const describeError = (error: unknown) =>
  error instanceof CliError ? error : new CliError(String(error), { exitCode: 1 });

const names = Array.from({ length: MODELS }, (_, i) => `bt_model_${i}`);
const project = dbtProjectOf('batch', names);

/** Models whose definitions together pass the request body limit: 40 of 700 KB (a long decision context). */
const LARGE = 40;
const largeNames = Array.from({ length: LARGE }, (_, i) => `bt_large_${i}`);
const largeProject = {
  ...dbtProjectOf('batchlarge', []),
  declarations: largeNames.map((name) => {
    const declaration = dbtDeclaration(name, 'batchlarge');
    const artifact = JSON.parse(declaration.artifact.content) as Record<string, unknown>;
    artifact.decision_context = `${name}: ${'why this table exists. '.repeat(32_000)}`;
    return { ...declaration, artifact: { ...declaration.artifact, content: JSON.stringify(artifact) } };
  }),
};

/** A project whose first model's registration meets a deadlock once (a trigger on gds.tables). */
const deadlockNames = ['dl_first', 'dl_second'];
/** A project whose first model's gate1.yml, after its registration, meets a deadlock once (on gate1_versions). */
const laterDeadlockNames = ['dlg_first', 'dlg_second'];

/**
 * A trigger `name` raising a deadlock (40P01) once, before the first insert into `on` whose `nameOf` (an SQL
 * expression over NEW) is `model`. It counts by a sequence of the same name, not a row: the deadlock rolls back
 * what its transaction wrote. The test drops the trigger.
 */
async function deadlockOnce(server: TestServer, name: string, on: string, nameOf: string, model: string) {
  await server.sql(`CREATE SEQUENCE gds.${name}`);
  await server.sql(`CREATE FUNCTION gds.${name}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF ${nameOf} = '${model}' AND nextval('gds.${name}') = 1 THEN
        RAISE EXCEPTION 'deadlock raised by the test' USING ERRCODE = '40P01';
      END IF;
      RETURN NEW;
    END $$`);
  await server.sql(
    `CREATE TRIGGER ${name} BEFORE INSERT ON ${on} FOR EACH ROW EXECUTE FUNCTION gds.${name}()`,
  );
}

describe.each(ENGINES)('apply in batches on $engine', ({ postgres, skip }) => {
  let started: ProjectServer | undefined;
  let server: TestServer;
  let client: ApiClient;
  let dev: string;
  const log: string[] = [];

  beforeAll(async () => {
    if (skip !== undefined) return;
    started = await startProjectServer({
      postgres,
      rateLimit: RATE_LIMIT,
      logger: (line) => log.push(line),
      relations: Object.fromEntries(
        [...names, ...largeNames, ...deadlockNames, ...laterDeadlockNames].map((name) => [
          name,
          'id integer, label text',
        ]),
      ),
    });
    ({ server, client, dev } = started);
  });

  afterAll(() => started?.close());

  it(
    `a first apply of ${MODELS} models makes a handful of requests and meets no 429 at ${RATE_LIMIT} a minute`,
    needs(skip),
    async () => {
      const plan = await planProject(client, project, { connectorId: dev });
      expect(plan.counts.create).toBe(MODELS);
      const summary = await applyPlan(client, plan, { describe: describeError });
      expect(summary.failed).toEqual([]);
      expect(summary.applied).toBe(MODELS);
      const steps = (step: string) => summary.actions.filter((a) => a.step === step && a.outcome === 'done');
      expect([steps('register').length, steps('gate1').length, steps('contract').length]).toEqual([
        MODELS,
        MODELS,
        MODELS,
      ]);
      const requests = log.filter((line) => line.startsWith('→ '));
      expect(requests.length).toBeLessThan(RATE_LIMIT / 2);
      expect(log.filter((line) => / 429 /.test(line))).toEqual([]);
      const [held] = await server.sql<{ tables: number; gates: number }>(
        `SELECT count(*)::int AS tables,
                (SELECT count(*)::int FROM gds.gate1_versions g JOIN gds.tables u ON u.id = g.table_id
                  WHERE u.project = 'batch@${dev}') AS gates
           FROM gds.tables WHERE project = $1 AND active`,
        [`batch@${dev}`],
      );
      expect(held).toEqual({ tables: MODELS, gates: MODELS });

      // A no-change plan names no model in a refusal: it never builds the project's --exclude hint index.
      const selectorAsked: Array<string | null> = [];
      const selectorOf = (uniqueId: string | null) => (selectorAsked.push(uniqueId), undefined);
      const again = await planProject(client, { ...project, selectorOf }, { connectorId: dev });
      expect(again.counts.unchanged).toBe(MODELS);
      expect(selectorAsked).toEqual([]);
      expect((await applyPlan(client, again, { describe: describeError })).actions).toEqual([]);
    },
  );

  it(
    `a first apply of ${LARGE} large definitions sends batches within the request body limit`,
    // 29 MB of definitions written: 24 s on PGlite at a load of 18.
    { ...needs(skip), timeout: 300_000 },
    async () => {
      const sent = largeProject.declarations.reduce((sum, d) => sum + d.artifact.content.length, 0);
      expect(sent).toBeGreaterThan(REQUEST_BODY_LIMIT_BYTES);
      log.length = 0;
      const plan = await planProject(client, largeProject, { connectorId: dev });
      expect(plan.counts.create).toBe(LARGE);
      const summary = await applyPlan(client, plan, { describe: describeError });
      expect(summary.failed).toEqual([]);
      expect(summary.applied).toBe(LARGE);
      const batches = log.filter((line) => line.startsWith('← ') && line.includes('/api/artifacts/batch'));
      expect(batches.length).toBeGreaterThan(1);
      expect(batches.every((line) => line.startsWith('← 200 '))).toBe(true);
      const [held] = await server.sql<{ tables: number }>(
        'SELECT count(*)::int AS tables FROM gds.tables WHERE project = $1 AND active',
        [`batchlarge@${dev}`],
      );
      expect(held).toEqual({ tables: LARGE });
    },
  );
  // An item whose first step the database rolled back (503 database_conflict: nothing of it stored) is written
  // by its single writes, which wait out Retry-After and send it again: registered, not reported failed.
  it('a table the batch met a deadlock on is registered by its single write', needs(skip), async () => {
    await deadlockOnce(server, 'deadlock_once', 'gds.tables', 'NEW.name', 'dl_first');
    try {
      log.length = 0;
      const plan = await planProject(client, dbtProjectOf('deadlock', deadlockNames), { connectorId: dev });
      expect(plan.counts.create).toBe(deadlockNames.length);
      const summary = await applyPlan(client, plan, { describe: describeError });
      expect(
        log.filter((line) => line.startsWith('← 200 ') && line.includes('/api/artifacts/batch')),
      ).toHaveLength(1);
      expect(summary.failed).toEqual([]);
      expect(summary.applied).toBe(deadlockNames.length);
      const held = await server.sql<{ name: string }>(
        'SELECT name FROM gds.tables WHERE project = $1 AND active ORDER BY name',
        [`deadlock@${dev}`],
      );
      expect(held.map((row) => row.name)).toEqual(deadlockNames);
      // dl_first was inserted twice: the batch's try, rolled back, and its single write.
      const [once] = await server.sql<{ tries: string }>(
        'SELECT last_value::text AS tries FROM gds.deadlock_once',
      );
      expect(once?.tries).toBe('2');
    } finally {
      await server.sql('DROP TRIGGER deadlock_once ON gds.tables');
    }
  });
  // An item whose gate1.yml step the database rolled back after its definition was stored (503 on a later
  // step): the definition is reported done, and the gate1.yml and intent are finished by their single writes,
  // which wait out Retry-After: not reported failed, nothing written twice.
  it(
    'a table whose gate1.yml step met a deadlock is finished by its single writes',
    needs(skip),
    async () => {
      await deadlockOnce(
        server,
        'gate1_deadlock_once',
        'gds.gate1_versions',
        '(SELECT name FROM gds.tables WHERE id = NEW.table_id)',
        'dlg_first',
      );
      try {
        log.length = 0;
        const plan = await planProject(client, dbtProjectOf('deadlock_gate1', laterDeadlockNames), {
          connectorId: dev,
        });
        expect(plan.counts.create).toBe(laterDeadlockNames.length);
        const summary = await applyPlan(client, plan, { describe: describeError });
        expect(summary.failed).toEqual([]);
        expect(summary.applied).toBe(laterDeadlockNames.length);
        const first = summary.actions.filter((action) => action.table === 'dlg_first');
        expect(first.map((action) => [action.step, action.outcome])).toEqual([
          ['register', 'done'],
          ['gate1', 'done'],
          ['contract', 'done'],
        ]);
        // One batch; dlg_first's gate1.yml and intent by their single writes.
        expect(
          log.filter((line) => line.startsWith('← 200 ') && line.includes('/api/artifacts/batch')),
        ).toHaveLength(1);
        const held = await server.sql<{ name: string; gate1: number; intent: boolean }>(
          `SELECT t.name,
                (SELECT count(*)::int FROM gds.gate1_versions g WHERE g.table_id = t.id) AS gate1,
                c.grain_type = 'ONE_PER_ENTITY' AS intent
           FROM gds.tables t LEFT JOIN gds.contracts c ON c.table_id = t.id
          WHERE t.project = $1 AND t.active ORDER BY t.name`,
          [`deadlock_gate1@${dev}`],
        );
        expect(held).toEqual([
          { name: 'dlg_first', gate1: 1, intent: true },
          { name: 'dlg_second', gate1: 1, intent: true },
        ]);
        const [once] = await server.sql<{ tries: string }>(
          'SELECT last_value::text AS tries FROM gds.gate1_deadlock_once',
        );
        expect(once?.tries).toBe('2');
      } finally {
        await server.sql('DROP TRIGGER gate1_deadlock_once ON gds.gate1_versions');
      }
    },
  );
});
