// A generated dbt project (scripts/bench/dbt-manifest.ts: seeds raw_source_0..2, models stg_entity_0,
// stg_entity_1, int_entity_2, int_entity_3, fct_entity_4, fct_entity_5 for 6 models) in a temp folder, its
// relations made in the dev warehouse schema of a reference server, and gds run in the test process against
// it as ADMIN: for the tests of `gds plan` / `gds apply` that edit the project's manifest as dbt would.
//
//   let shop: GeneratedProject;
//   beforeAll(async () => { shop = await generatedProject('ephemeral'); });
//   afterAll(() => shop?.close());
//   const r = await shop.gds(['plan', ...shop.onDev()]);
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { serverEnv } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import { loadDbtProject } from '../../src/services/dbt-project.js';
import { writeDbtProject } from '../../scripts/bench/dbt-manifest.js';

export const SCHEMA = 'analytics_dev';

/** The manifest as the tests edit it. */
export interface EditedManifest {
  nodes: Record<
    string,
    { config?: Record<string, unknown>; depends_on?: { nodes?: string[] }; description?: string }
  >;
}

export interface GeneratedProject {
  server: TestServer;
  /** The temp folder (the project is `project`, in it). */
  dir: string;
  /** The dbt project folder. */
  project: string;
  gds(args: string[]): Promise<CliResult>;
  /** `--dbt <project> --connector warehouse-dev`. */
  onDev(): string[];
  /** Edits target/manifest.json as dbt would after a change. */
  editManifest(change: (manifest: EditedManifest) => void): Promise<void>;
  close(): Promise<void>;
}

/** Each line of a --json output, parsed. */
export const jsonLines = (text: string): Array<Record<string, unknown>> =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** The `fields` of each line whose `field` is `value`, sorted: `[[table, outcome], …]`. */
export function linesWhere(
  lines: Array<Record<string, unknown>>,
  [field, value]: [string, unknown],
  ...fields: string[]
): unknown[][] {
  return lines
    .filter((line) => line[field] === value)
    .map((line) => fields.map((f) => line[f]))
    .sort();
}

/** A 6-model generated project named `shop`, its relations in analytics_dev, on a new server. */
export async function generatedProject(name: string): Promise<GeneratedProject> {
  const server = await startTestServer();
  const dir = await mkdtemp(join(tmpdir(), `gds-e2e-${name}-`));
  const project = writeDbtProject(6, { dir: join(dir, 'shop'), schema: SCHEMA, project: 'shop' });
  for (const d of (await loadDbtProject(project, {})).declarations)
    await server.sql(
      `CREATE TABLE ${SCHEMA}."${d.name}" (${d.columns.map((c) => `"${c.name}" text`).join(', ')})`,
    );
  const path = join(project, 'target/manifest.json');
  return {
    server,
    dir,
    project,
    gds: (args) =>
      runInProcess(args, {
        env: serverEnv(server.url, server.user('ADMIN').cliToken, join(dir, 'config')),
      }),
    onDev: () => ['--dbt', project, '--connector', 'warehouse-dev'],
    async editManifest(change) {
      const manifest = JSON.parse(await readFile(path, 'utf8')) as EditedManifest;
      change(manifest);
      await writeFile(path, JSON.stringify(manifest));
    },
    close: () => server.close(),
  };
}
