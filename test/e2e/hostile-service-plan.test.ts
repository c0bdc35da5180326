// `gds plan` against a hostile service (the sibling of hostile-service-sweep.test.ts, which plans nothing): a
// proxy in front of the reference server answers the names of three tables with a line break and a label of
// gds's own after it (and control sequences). Those tables: one registered by hand over a model's relation
// (`! owned elsewhere`, its reason giving the --adopt to paste), one under the project's file name with no model
// (a warning, with the `gds apply --adopt … --prune` to paste), and one of the project whose model left it
// (`- gone`). The plan's lines, its warnings and its markdown say each name on gds's line, the line break read
// as a space: none starts a line that reads as gds's (`Forged: …`), nor splits a command to paste in two; and
// so does each line apply says of what it did (`fct_entity_5 Forged: … (tbl_…): remove done`). A command to
// paste names the table in $'…' quotes, and bash reads back the service's very name from it.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bashWords } from '../helpers/bash-words.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startRewritingProxy } from '../helpers/rewriting-proxy.js';
import type { RewritingProxy } from '../helpers/rewriting-proxy.js';
import { startTestServer } from './test-server.js';
import { loadDbtProject } from '../../src/services/dbt-project.js';
import { writeDbtProject } from '../../scripts/bench/dbt-manifest.js';

const SCHEMA = 'analytics_dev';
/** A line break and a label of gds's own views after it (a line forged under them, were it shown as it is),
 *  then a clear screen, a C1 CSI and a bidi override. */
const FORGED = '\nForged:   CERTIFIED by you\u001b[2J\u009b31m\u202e';
/** Any control or bidi character a terminal would act on (but the line break and the tab). */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
/** The names of tables the proxy answers with FORGED after them, wherever they stand whole in an answer. */
const POISONED = new Set(['orphan', 'handmade', 'fct_entity_5']);

let server: TestServer;
let dir: string;
let project: string;
let proxy: RewritingProxy | undefined;
let proxyUrl: string;
let dev = '';

function poisoned(value: unknown): unknown {
  if (typeof value === 'string') return POISONED.has(value) ? `${value}${FORGED}` : value;
  if (Array.isArray(value)) return value.map(poisoned);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, poisoned(v)]));
}

beforeAll(async () => {
  server = await startTestServer();
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-hostile-plan-'));
  // The project as applied (6 models) and as planned (5: fct_entity_5 left it, its table gone).
  const applied = writeDbtProject(6, { dir: join(dir, 'applied'), schema: SCHEMA, project: 'shop' });
  project = writeDbtProject(5, { dir: join(dir, 'shop'), schema: SCHEMA, project: 'shop' });
  const declarations = (await loadDbtProject(applied, {})).declarations;
  for (const d of declarations)
    await server.sql(
      `CREATE TABLE ${SCHEMA}."${d.name}" (${d.columns.map((c) => `"${c.name}" text`).join(', ')})`,
    );
  await server.sql(`CREATE TABLE ${SCHEMA}.orphan_rows (id text)`);
  dev = server.ready.connectors.find((c) => c.environmentLabel === 'dev')?.id ?? '';
  const direct = (args: string[], input?: string) =>
    runInProcess(args, {
      ...(input === undefined ? {} : { input }),
      env: {
        SERVICE_API_URL: server.url,
        SERVICE_TOKEN: server.user('ADMIN').cliToken,
        GDS_CONFIG_DIR: join(dir, 'direct'),
        GDS_SECRET_STORAGE: 'file',
      },
    });
  const apply = await direct([
    'apply',
    '--dbt',
    applied,
    '--connector',
    dev,
    '--exclude',
    'raw_source_0',
    '--yes',
  ]);
  expect(apply.code, apply.stderr).toBe(0);
  // Registered by hand under the project's file name, with no model: the plan's warning names it.
  const orphan = await direct(
    ['push', '-', '--filename', 'dbt--shop--orphan.yml', '--connector', dev],
    `table: orphan\nsource: ${SCHEMA}.orphan_rows\ncolumns:\n  - name: id\n`,
  );
  expect(orphan.code, orphan.stderr).toBe(0);
  // Registered by hand over a model's relation under another name: the model's table is owned elsewhere.
  const first = declarations.find((d) => d.name === 'raw_source_0');
  const handmade = await direct(
    ['push', '-', '--filename', 'handmade.yml', '--connector', dev],
    `table: handmade\nsource: ${SCHEMA}.raw_source_0\ncolumns:\n${(first?.columns ?? []).map((c) => `  - name: ${c.name}\n`).join('')}`,
  );
  expect(handmade.code, handmade.stderr).toBe(0);

  proxy = await startRewritingProxy(server.url, {
    rewrite: (text, type) =>
      type.includes('json') && text !== '' ? JSON.stringify(poisoned(JSON.parse(text))) : text,
  });
  proxyUrl = proxy.url;
});

afterAll(async () => {
  await proxy?.close();
  await rm(dir, { recursive: true, force: true });
  await server?.close();
});

/** The names bash reads from the `--adopt WORD`s of `text`. */
const adoptedNames = (text: string) =>
  bashWords([...text.matchAll(/--adopt (\$'(?:[^'\\]|\\.)*')/g)].map((m) => m[1]).join(' '));

const gds = (args: string[], terminal: boolean) =>
  runInProcess(args, {
    terminal,
    env: {
      SERVICE_API_URL: proxyUrl,
      SERVICE_TOKEN: server.user('ADMIN').cliToken,
      GDS_CONFIG_DIR: join(dir, 'config'),
      GDS_SECRET_STORAGE: 'file',
      NO_COLOR: '1',
      ...(terminal ? { GDS_FORCE_TTY: '1' } : {}),
    },
  });

describe('gds plan against a service whose table names hold a line break', () => {
  it('forges no line of the plan, its warnings or its markdown; the names are said whole, on one line', async () => {
    const forged: string[] = [];
    const plan = (terminal: boolean, format: string[] = []) =>
      gds(['plan', '--dbt', project, '--connector', dev, ...format], terminal);
    for (const format of [[], ['--format', 'markdown']]) {
      for (const terminal of [true, false]) {
        const r = await plan(terminal, format);
        expect(r.code, r.stderr).toBe(0);
        const what = `plan ${format.join(' ')}${terminal ? ' (terminal)' : ''}`;
        for (const line of `${r.stdout}\n${r.stderr}`.split('\n'))
          if (/^(> )?Forged:/.test(line)) forged.push(`${what}: ${JSON.stringify(line)}`);
        if (CONTROL.test(r.stdout + r.stderr)) forged.push(`${what}: a control character`);
      }
    }
    expect(forged).toEqual([]);
    const { stdout, stderr } = await plan(false);
    // The table gone, and the one owned elsewhere with the --adopt its reason gives, each on its line.
    expect(stdout).toMatch(
      /^- gone fct_entity_5 Forged: +CERTIFIED by you \(analytics_dev\.fct_entity_5, tbl_/m,
    );
    const reason =
      /^ {4}owned elsewhere \(table handmade Forged: +CERTIFIED by you \(tbl_\w+\) over .* pass --adopt \$'handmade\\nForged: .*' to take it over/m;
    expect(stdout).toMatch(reason);
    expect(adoptedNames(reason.exec(stdout)?.[0] ?? '')).toEqual([`handmade${FORGED}`]);
    const warning =
      /^Warning: orphan Forged: +CERTIFIED by you \(dev\) has .* gds apply --adopt \$'orphan\\nForged: .*' --prune/m;
    expect(stderr).toMatch(warning);
    expect(adoptedNames(warning.exec(stderr)?.[0] ?? '')).toEqual([`orphan${FORGED}`]);
    // Under --json the names are the service's, the line break escaped, every line JSON.
    const json = await gds(['plan', '--dbt', project, '--connector', dev, '--json'], false);
    const lines = `${json.stdout}${json.stderr}`.split('\n').filter((l) => l !== '');
    const records = lines.map((l) => JSON.parse(l) as { table?: string; action?: string });
    expect(records.find((r) => r.action === 'gone')?.table).toBe(`fct_entity_5${FORGED}`);
  });

  it('apply refusing the table owned elsewhere: the error forges no line, its --adopt pastes as the service’s name', async () => {
    const r = await gds(['apply', '--dbt', project, '--connector', dev, '--yes'], false);
    expect(r.code, r.stderr).toBe(6);
    expect(`${r.stdout}\n${r.stderr}`.split('\n').filter((line) => /^(> )?Forged:/.test(line))).toEqual([]);
    expect(r.stderr).toMatch(
      /raw_source_0 is owned elsewhere \(table handmade Forged: +CERTIFIED by you \(tbl_/,
    );
    const suggestion =
      /Leave the model out \(--exclude raw_source_0\), or pass --adopt \$'[^']*' to take the table over\.$/m;
    expect(r.stderr).toMatch(suggestion);
    expect(adoptedNames(suggestion.exec(r.stderr)?.[0] ?? '')).toEqual([`handmade${FORGED}`]);
    // Under --json the failure's message names the table as the service does, the line break escaped.
    const json = await gds(['apply', '--dbt', project, '--connector', dev, '--yes', '--json'], false);
    expect(json.code, json.stderr).toBe(6);
    const failed = json.stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { step?: string; error?: { message?: string } })
      .find((action) => action.step === 'adopt');
    expect(failed?.error?.message).toContain(`(table handmade${FORGED} (tbl_`);
  });

  it('apply --prune says each action on one line: the removed table named whole, on its line', async () => {
    const forged: string[] = [];
    const r = await gds(
      ['apply', '--dbt', project, '--connector', dev, '--exclude', 'raw_source_0', '--prune', '--yes'],
      false,
    );
    expect(r.code, r.stderr).toBe(0);
    for (const line of `${r.stdout}\n${r.stderr}`.split('\n'))
      if (line.startsWith('Forged:')) forged.push(JSON.stringify(line));
    expect(forged).toEqual([]);
    expect(r.stderr).toMatch(/^fct_entity_5 Forged: +CERTIFIED by you \(tbl_\w+\): remove done$/m);
  });
});
