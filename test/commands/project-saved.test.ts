// Saved plans (src/services/project-saved.ts) and the bulk read plan makes (GET /api/held-tables), against the
// in-process reference server on PGlite and PostgreSQL: a plan written to a file and read back is applied as
// it was; one the service moved away from since (a changed gate1.yml, a table registered since) is exit 6
// naming the table, and nothing is written; a file that is not a plan is exit 2. The bulk read pages the
// environment's tables with their definitions, gate1.yml and contracts, and refuses callers as the spec says.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError } from '../../src/core/errors.js';
import type { ApiClient } from '../../src/client/index.js';
import { applyPlan } from '../../src/services/project-apply.js';
import { planProject } from '../../src/services/project-plan.js';
import { checkSavedPlan, planFileText, readPlanFile } from '../../src/services/project-saved.js';
import { dbtProjectOf } from '../helpers/dbt-declaration.js';
import { ENGINES } from '../helpers/engines.js';
import type { ProjectServer } from '../helpers/project-server.js';
import { startProjectServer } from '../helpers/project-server.js';
import type { TestServer } from '../helpers/server.js';
import { needs } from '../helpers/skip.js';

const describeError = (error: unknown) =>
  error instanceof CliError ? error : new CliError(String(error), { exitCode: 1 });

// One project of several models over the tests, each declaring some: every model of it a node, selected or not.
const project = (names: string[]) => ({
  ...dbtProjectOf('saved', names),
  nodeNames: [...new Set([...names, 'sv_one', 'sv_two', 'sv_three'])],
});

describe.each(ENGINES)('saved plans and the bulk read on $engine', ({ postgres, skip }) => {
  let started: ProjectServer | undefined;
  let server: TestServer;
  let client: ApiClient;
  let dev: string;
  let dir: string;

  beforeAll(async () => {
    if (skip !== undefined) return;
    started = await startProjectServer({
      postgres,
      relations: {
        sv_one: 'id integer, label text',
        sv_two: 'id integer, label text',
        sv_three: 'id integer, label text',
      },
    });
    ({ server, client, dev } = started);
    dir = await mkdtemp(join(tmpdir(), 'gds-saved-plan-'));
  });

  afterAll(() => started?.close());

  async function saved(names: string[], file: string) {
    const plan = await planProject(client, project(names), { connectorId: dev });
    await writeFile(join(dir, file), planFileText(plan, new Date()));
    return readPlanFile(join(dir, file));
  }

  it(
    'a saved plan read back is applied as it was; once the service changed it is exit 6 naming the table',
    needs(skip),
    async () => {
      const first = await saved(['sv_one', 'sv_two'], 'first.json');
      await checkSavedPlan(client, first);
      expect((await applyPlan(client, first, { describe: describeError })).failed).toEqual([]);

      const clean = await saved(['sv_one', 'sv_two'], 'clean.json');
      expect(clean.tables.map((t) => t.action)).toEqual(['unchanged', 'unchanged']);
      await checkSavedPlan(client, clean);
      const two = clean.tables.find((t) => t.table === 'sv_two')?.tableId ?? '';
      await client.gates.apply(
        two,
        // Quotes, a backslash and text beyond ASCII: the bulk read below answers it byte for byte.
        `# the "id" rule's \\ bound — naïve 😀\nfieldOverrides:\n  - field: id\n    nullRate: { warn: 0.1, fail: 0.2 }\n`,
        {
          ifMatch: 1,
        },
      );
      const refusal = await checkSavedPlan(client, clean).catch((error: unknown) => error);
      expect(refusal).toMatchObject({ exitCode: 6, code: 'plan_stale' });
      expect((refusal as Error).message).toContain(`sv_two (${two}) gate1.yml v1 → v2`);
    },
  );

  it('a saved create is refused once another apply registered the table', needs(skip), async () => {
    const plan = await saved(['sv_three'], 'three.json');
    expect(plan.tables[0]?.action).toBe('create');
    expect(
      (await applyPlan(client, await saved(['sv_three'], 'other.json'), { describe: describeError })).failed,
    ).toEqual([]);
    await expect(checkSavedPlan(client, plan)).rejects.toMatchObject({
      exitCode: 6,
      message: expect.stringContaining('sv_three'),
    });
  });

  it('a plan reads the connector’s warehouse objects once', needs(skip), async () => {
    let reads = 0;
    const counting: ApiClient = {
      ...client,
      connectors: {
        ...client.connectors,
        objects: (...args) => {
          reads += 1;
          return client.connectors.objects(...args);
        },
      },
    };
    const plan = await planProject(counting, project(['sv_one', 'sv_four']), { connectorId: dev });
    expect(plan.tables.map((t) => t.table).slice(0, 2)).toEqual(['sv_one', 'sv_four']);
    expect(reads).toBe(1);
  });

  it('a file that is not a plan is exit 2', needs(skip), async () => {
    for (const [name, text] of [
      ['none.json', null],
      ['text.json', 'not json'],
      ['other.json', '{"format":"terraform"}'],
      ['newer.json', '{"format":"gds-plan","version":9,"plan":{}}'],
    ] as const) {
      if (text !== null) await writeFile(join(dir, name), text);
      await expect(readPlanFile(join(dir, name)), name).rejects.toMatchObject({
        exitCode: 2,
        code: 'invalid_plan_file',
      });
    }
  });

  it(
    'GET /api/held-tables pages the environment with definitions, gate1.yml, contracts and owners',
    needs(skip),
    async () => {
      const all = await client.tables.held('dev');
      const listed = (await client.tables.list()).filter((t) => t.environmentLabel === 'dev');
      expect(all.map((t) => t.id)).toEqual(listed.map((t) => t.id));
      expect(await client.tables.held('dev', { pageSize: 2 })).toEqual(all);
      // Each definition as the table's own read answers it.
      for (const table of all) expect(table.definition).toEqual(await client.artifacts.held(table.id));
      // Each gate1.yml the newest version, as the table's own read answers it (sv_two holds two by now).
      for (const table of all)
        if (table.gate1 !== null) expect(table.gate1).toEqual(await client.gates.get(table.id));
      expect(all.find((t) => t.name === 'sv_two')?.gate1).toMatchObject({
        version: 2,
        content: expect.stringContaining(`# the "id" rule's \\ bound — naïve 😀\n`),
      });
      const one = all.find((t) => t.name === 'sv_one');
      expect(one).toMatchObject({
        project: 'saved@' + dev,
        definition: { definitionVersion: 1, mayReplace: true },
        gate1: { version: 1 },
        contract: { contract: { grainKeyColumns: ['id'] }, maySetIntent: true },
      });
    },
  );

  it(
    'GET /api/held-tables: 401 without a person, 403 outside the caller’s environments, 400 without environment',
    needs(skip),
    async () => {
      const get = (query: string, token: string | null) =>
        fetch(`${server.url}/api/held-tables${query}`, {
          headers: token === null ? {} : { authorization: `Bearer ${token}` },
        });
      expect((await get('?environment=dev', null)).status).toBe(401);
      expect((await get('?environment=dev', 'not-a-token')).status).toBe(401);
      expect((await get('?environment=production', server.user('MEMBER').cliToken)).status).toBe(403);
      expect((await get('', server.user('ADMIN').cliToken)).status).toBe(400);
      expect((await get('?environment=dev&limit=0', server.user('ADMIN').cliToken)).status).toBe(400);
      expect((await get('?environment=dev', server.user('MEMBER').cliToken)).status).toBe(200);
    },
  );
});
