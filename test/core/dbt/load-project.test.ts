// loadDbtProject: finds target/manifest.json (and catalog.json) or a folder holding them, reads the seeds'
// CSV headers of a project folder, and refuses with exit 2 and the fix.
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliError } from '../../../src/core/errors.js';
import { csvHeader, parseCsv } from '../../../src/core/dbt/csv.js';
import { loadDbtProject } from '../../../src/services/dbt-project.js';
import { sharedFixturesDir } from '../../helpers/fixtures.js';
import { needs, noSharedFixtures } from '../../helpers/skip.js';
import { catalog, columns, genericTest, manifest, model } from './helpers.js';

const made: string[] = [];
function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gds-dbt-'));
  made.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

// orders' relationships test reads customers too: eager runs it with orders selected, cautious does not.
const RELATIONSHIP = 'test.shop.relationships_orders_customer_id.abc';

/** A project folder (dbt_project.yml with `flags`, target/manifest.json of `dbtVersion`) of orders and customers. */
function relationshipProject(options: { flags?: string; dbtVersion?: string } = {}): string {
  const dir = folder();
  mkdirSync(join(dir, 'target'));
  writeFileSync(join(dir, 'dbt_project.yml'), `name: shop\n${options.flags ?? ''}`);
  const m = manifest(
    model('orders', { columns: columns({ id: 'int', customer_id: 'int' }) }),
    model('customers', { columns: columns({ customer_id: 'int' }) }),
    genericTest(
      'relationships',
      'model.shop.orders',
      { to: "ref('customers')", field: 'customer_id' },
      { column: 'customer_id', id: RELATIONSHIP, dependsOn: ['model.shop.customers', 'model.shop.orders'] },
    ),
  );
  if (options.dbtVersion !== undefined)
    (m['metadata'] as Record<string, unknown>)['dbt_version'] = options.dbtVersion;
  writeFileSync(join(dir, 'target', 'manifest.json'), JSON.stringify(m));
  return dir;
}

async function refusal(promise: Promise<unknown>): Promise<CliError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CliError);
  return error as CliError;
}

describe('loadDbtProject', () => {
  it('reads a folder holding manifest.json', async () => {
    const dir = folder();
    writeFileSync(
      join(dir, 'manifest.json'),
      JSON.stringify(manifest(model('orders', { columns: columns({ id: 'int' }) }))),
    );
    const project = await loadDbtProject(dir, {});
    expect(project.declarations.map((d) => d.name)).toEqual(['orders']);
  });

  it("accepted_values compares with each number as dbt prints it: the manifest's text (Python's repr), 1.0 not 1", async () => {
    const dir = folder();
    const values = (list: unknown[], extra: Record<string, unknown>, column: string) =>
      genericTest('accepted_values', 'model.shop.orders', { values: list, ...extra }, { column });
    const m = manifest(
      model('orders', { columns: columns({ status: 'text', code: 'numeric', rank: 'text', kind: 'text' }) }),
      values([1, 2], {}, 'status'),
      values([1, 2], { quote: false }, 'code'),
      values([3, 4], {}, 'rank'),
      values(['x', 5], {}, 'kind'),
    );
    // As Python's json writes YAML's `values: [1.0, 2.0]`, a tiny float and an integer past 2^53.
    const text = JSON.stringify(m)
      .replace('"column_name":"status","values":[1,2]', '"column_name":"status","values":[1.0,2.0]')
      .replace('"values":[1,2],"quote":false', '"values":[1e-05,2.5],"quote":false')
      .replace('"values":[3,4]', '"values":[3,12345678901234567890]')
      // Strings beside numbers: the whole test is read again, not the array alone.
      .replace('"values":["x",5]', '"values":["x",5.0]');
    expect(text).toContain('[1.0,2.0]');
    expect(text).toContain('[1e-05,2.5]');
    expect(text).toContain('12345678901234567890]');
    writeFileSync(join(dir, 'manifest.json'), text);
    const [orders] = (await loadDbtProject(dir, {})).declarations;
    expect(orders?.notMappedTests).toEqual([]);
    expect(orders?.gate1Yaml).toContain("status IN ('1.0', '2.0')");
    expect(orders?.gate1Yaml).toContain('code IN (1e-05, 2.5)');
    expect(orders?.gate1Yaml).toContain("rank IN ('3', '12345678901234567890')");
    expect(orders?.gate1Yaml).toContain("kind IN ('x', '5.0')");
  });

  it('a manifest.json that is not UTF-8: exit 2 with the byte offset (read as gds reads every input)', async () => {
    const dir = folder();
    writeFileSync(join(dir, 'manifest.json'), Buffer.from('{"nodes": {"caf\xe9": 1}}', 'latin1'));
    const error = await refusal(loadDbtProject(dir, {}));
    expect(error).toMatchObject({ exitCode: 2, code: 'input_not_utf8', details: { byteOffset: 15 } });
  });

  it('a project never compiled: exit 2, says to run dbt compile', async () => {
    const dir = folder();
    writeFileSync(join(dir, 'dbt_project.yml'), 'name: shop\n');
    const error = await refusal(loadDbtProject(dir, {}));
    expect(error.exitCode).toBe(2);
    expect(error.message).toMatch(/no manifest\.json/);
    expect(error.suggestion).toMatch(/dbt compile/);
    expect(error.suggestion).toMatch(/dbt docs generate/);
  });

  it('a missing folder, a file, a broken manifest, a bad selector: exit 2 each', async () => {
    expect((await refusal(loadDbtProject('/nonexistent/gds-dbt', {}))).exitCode).toBe(2);
    const dir = folder();
    writeFileSync(join(dir, 'manifest.json'), '{"nodes": {');
    const broken = await refusal(loadDbtProject(dir, {}));
    expect(broken.exitCode).toBe(2);
    expect(broken.message).toMatch(/not valid JSON/);
    expect((await refusal(loadDbtProject(join(dir, 'manifest.json'), {}))).message).toMatch(/not a folder/);
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ metadata: {}, results: [] }));
    expect((await refusal(loadDbtProject(dir, {}))).code).toBe('invalid_dbt_manifest');
    writeFileSync(
      join(dir, 'manifest.json'),
      JSON.stringify(manifest(model('orders', { columns: columns({ id: 'int' }) }))),
    );
    const selector = await refusal(loadDbtProject(dir, { select: ['tag:nope'], strict: true }));
    expect(selector.exitCode).toBe(2);
    expect(selector.message).toMatch(/tag:nope/);
    const state = await refusal(loadDbtProject(dir, { select: ['state:modified'] }));
    expect(state.exitCode).toBe(2);
    expect(state.message).toMatch(/pass --state DIR/);
    const noState = await refusal(loadDbtProject(dir, { select: ['state:modified'] }, { state: folder() }));
    expect(noState.exitCode).toBe(2);
    expect(noState.code).toBe('dbt_state_not_found');
  });

  it('--state DIR: state:modified plans only what changed against the manifest in DIR', async () => {
    const dir = folder();
    const prod = folder();
    const body = (name: string, sql: string) =>
      model(name, {
        columns: columns({ id: 'int' }),
        raw_code: sql,
        checksum: { name: 'sha256', checksum: sql },
      });
    writeFileSync(
      join(prod, 'manifest.json'),
      JSON.stringify(manifest(body('orders', 'select 1 as id'), body('customers', 'select 2 as id'))),
    );
    writeFileSync(
      join(dir, 'manifest.json'),
      JSON.stringify(manifest(body('orders', 'select 1 as id'), body('customers', 'select 3 as id'))),
    );
    const project = await loadDbtProject(dir, { select: ['state:modified'] }, { state: prod });
    expect(project.declarations.map((d) => d.name)).toEqual(['customers']);
  });

  it("a method the manifest's dbt did not have: exit 2 naming the method and the dbt that added it, nothing planned", async () => {
    const dir = relationshipProject({ dbtVersion: '1.4.9' });
    const error = await refusal(loadDbtProject(dir, { select: ['orders'], exclude: ['access:private'] }));
    expect(error).toMatchObject({ exitCode: 2, code: 'invalid_dbt_selector' });
    expect(error.message).toMatch(
      /dbt 1\.4\.9, which wrote the manifest, has no access: method \(dbt 1\.5 added it/,
    );
    // The dbt that added it reads it.
    const later = relationshipProject({ dbtVersion: '1.5.0' });
    const names = (await loadDbtProject(later, { select: ['orders'], exclude: ['access:private'] }))
      .declarations;
    expect(names.map((d) => d.name)).toEqual(['orders']);
  });

  describe("dbt_project.yml's flags: indirect_selection (dbt 1.8+ project flags)", () => {
    const relationship = RELATIONSHIP;
    const project = (flags: string) => relationshipProject({ flags });
    const mapped = async (dir: string, selection: { indirectSelection?: 'eager' | 'cautious' } = {}) =>
      (await loadDbtProject(dir, { select: ['orders'], ...selection })).declarations[0]?.mappedTests.map(
        (t) => t.test,
      );

    it('applies when neither --indirect-selection nor DBT_INDIRECT_SELECTION says otherwise', async () => {
      expect(await mapped(project(''))).toEqual([relationship]);
      expect(await mapped(project('flags:\n  indirect_selection: cautious\n'))).toEqual([]);
      // The flag (or the variable, which oclif reads into it) wins over the project's.
      expect(
        await mapped(project('flags:\n  indirect_selection: cautious\n'), { indirectSelection: 'eager' }),
      ).toEqual([relationship]);
    });

    it('a mode dbt does not know: exit 2, naming dbt_project.yml', async () => {
      const error = await refusal(loadDbtProject(project('flags:\n  indirect_selection: lazy\n'), {}));
      expect(error).toMatchObject({ exitCode: 2, code: 'invalid_indirect_selection' });
      expect(error.message).toMatch(/dbt_project\.yml.*lazy/);
    });
  });

  describe("profiles.yml's config: indirect_selection (dbt 1.0-1.4's user config, 1.8+'s project flags)", () => {
    const relationship = RELATIONSHIP;
    // A profiles.yml as dbt's users write it: the profile's credentials, and the config: block.
    const profiles = (config: string) =>
      `jaffle:\n  target: dev\n  outputs:\n    dev:\n      type: postgres\n      password: s3cret-pw\n${config}`;
    const project = relationshipProject;
    const load = (dir: string, where: { profilesDir?: string; cwd?: string; home?: string }) =>
      loadDbtProject(dir, { select: ['orders'] }, { profiles: { cwd: folder(), home: folder(), ...where } });
    const mapped = async (dir: string, where: { profilesDir?: string; cwd?: string; home?: string }) =>
      (await load(dir, where)).declarations[0]?.mappedTests.map((t) => t.test);
    const profilesIn = (text: string) => {
      const dir = folder();
      writeFileSync(join(dir, 'profiles.yml'), text);
      return dir;
    };

    it('applies from --profiles-dir (DBT_PROFILES_DIR), else the current folder, else ~/.dbt', async () => {
      const cautious = profilesIn(profiles('config:\n  indirect_selection: cautious\n'));
      expect(await mapped(project(), {})).toEqual([relationship]);
      expect(await mapped(project(), { profilesDir: cautious })).toEqual([]);
      expect(await mapped(project(), { cwd: cautious })).toEqual([]);
      const home = folder();
      mkdirSync(join(home, '.dbt'));
      writeFileSync(
        join(home, '.dbt', 'profiles.yml'),
        profiles('config:\n  indirect_selection: cautious\n'),
      );
      expect(await mapped(project(), { home })).toEqual([]);
      // The current folder's profiles.yml comes before ~/.dbt's, and --profiles-dir before both.
      const eager = profilesIn(profiles('config:\n  indirect_selection: eager\n'));
      expect(await mapped(project(), { cwd: eager, home })).toEqual([relationship]);
      expect(await mapped(project(), { profilesDir: cautious, cwd: eager })).toEqual([]);
    });

    it('--indirect-selection, DBT_INDIRECT_SELECTION and dbt_project.yml flags: come first', async () => {
      const cautious = profilesIn(profiles('config:\n  indirect_selection: cautious\n'));
      const flagged = await loadDbtProject(
        project(),
        { select: ['orders'], indirectSelection: 'eager' },
        { profiles: { profilesDir: cautious } },
      );
      expect(flagged.declarations[0]?.mappedTests.map((t) => t.test)).toEqual([relationship]);
      // dbt 1.8+ reads profiles.yml's config: only when dbt_project.yml has no flags:, and refuses both.
      const both = await load(project({ flags: 'flags:\n  send_anonymous_usage_stats: false\n' }), {
        profilesDir: cautious,
      });
      expect(both.declarations[0]?.mappedTests.map((t) => t.test)).toEqual([relationship]);
      expect(both.warnings).toContainEqual(
        expect.stringMatching(/config: block and dbt_project\.yml flags:/),
      );
    });

    it("is read as the manifest's dbt reads it: not by dbt 1.5 to 1.7, nor before 1.0", async () => {
      const cautious = profilesIn(profiles('config:\n  indirect_selection: cautious\n'));
      for (const [version, tests] of [
        ['1.0.4', []],
        ['1.4.1', []],
        ['1.5.0', [relationship]],
        ['1.7.9', [relationship]],
        ['1.8.8', []],
        ['1.11.2', []],
        // Before 1.0 no profiles.yml mode is read: 0.19 ran the test (eager), 0.21 not (its own default,
        // cautious, as dbt 0.20 and 0.21 selected tests).
        ['0.19.2', [relationship]],
        ['0.21.0', []],
      ] as const)
        expect([version, await mapped(project({ dbtVersion: version }), { profilesDir: cautious })]).toEqual([
          version,
          tests,
        ]);
    });

    it('reads a profiles.yml as dbt (PyYAML) does: a repeated key keeps its last value, << merges', async () => {
      // A key written twice anywhere (here an output's threads) is no error to dbt: the last one stands.
      const repeated = profiles(
        '      threads: 4\n      threads: 8\nconfig:\n  indirect_selection: cautious\n',
      );
      expect(await mapped(project(), { profilesDir: profilesIn(repeated) })).toEqual([]);
      const twice = profiles('config:\n  indirect_selection: eager\n  indirect_selection: cautious\n');
      expect(await mapped(project(), { profilesDir: profilesIn(twice) })).toEqual([]);
      // A config: built from an anchor, merged as PyYAML merges it.
      const merged = `defaults: &defaults\n  indirect_selection: cautious\n${profiles('config:\n  <<: *defaults\n')}`;
      expect(await mapped(project(), { profilesDir: profilesIn(merged) })).toEqual([]);
    });

    it('a profiles.yml gds cannot read is left alone; a mode dbt does not know is exit 2, never the credentials', async () => {
      for (const text of [
        'jaffle: [unclosed\n',
        '\xff\xfe',
        '',
        'config: nope\n',
        profiles('config:\n  indirect_selection: 5\n'),
      ])
        expect(await mapped(project(), { profilesDir: profilesIn(text) })).toEqual([relationship]);
      const broken = await load(project(), { profilesDir: profilesIn(profiles('  bad: [unclosed\n')) });
      expect(broken.warnings).toContainEqual(
        expect.stringMatching(/profiles\.yml is not YAML dbt reads .*config: indirect_selection is not read/),
      );
      expect(broken.warnings.join(' ')).not.toContain('s3cret-pw');
      const missing = await load(project(), { profilesDir: join(folder(), 'nowhere') });
      expect(missing.declarations[0]?.mappedTests.map((t) => t.test)).toEqual([relationship]);
      expect(missing.warnings).toContainEqual(expect.stringMatching(/nowhere.* holds no profiles\.yml/));
      const error = await refusal(
        load(project(), { profilesDir: profilesIn(profiles('config:\n  indirect_selection: lazy\n')) }),
      );
      expect(error).toMatchObject({ exitCode: 2, code: 'invalid_indirect_selection' });
      expect(error.message).toMatch(/profiles\.yml.*lazy/);
      expect(JSON.stringify(error)).not.toContain('s3cret-pw');
      expect(`${error.message} ${error.suggestion ?? ''}`).not.toContain('s3cret-pw');
    });
  });

  describe('config.KEY:, result: and source_status: read what they compare, and only then', () => {
    const owned = (owner: string, name: string) =>
      model(name, {
        columns: columns({ id: 'int' }),
        config: { enabled: true, materialized: 'view', meta: { owner } },
      });
    const write = (dir: string, extra: Record<string, unknown> = {}) =>
      writeFileSync(
        join(dir, 'manifest.json'),
        JSON.stringify({ ...manifest(owned('alice', 'orders'), owned('bob', 'customers')), ...extra }),
      );
    const tables = (project: { declarations: Array<{ name: string }> }) =>
      project.declarations.map((d) => d.name);
    /** A run_results.json or sources.json of dbt's, `kind` its schema (`run-results/v6`). */
    const artifact = (path: string, kind: string, results: unknown[]) =>
      writeFileSync(
        path,
        JSON.stringify({
          metadata: { dbt_schema_version: `https://schemas.getdbt.com/dbt/${kind}.json` },
          results,
        }),
      );

    it("config.KEY: on the CLI, or in selectors.yml's default selector (the manifest read again with the configs)", async () => {
      const dir = folder();
      write(dir, {
        selectors: {
          mine: { name: 'mine', default: true, definition: { method: 'config.meta.owner', value: 'bob' } },
        },
      });
      expect(tables(await loadDbtProject(dir, { select: ['config.meta.owner:alice'] }))).toEqual(['orders']);
      expect(tables(await loadDbtProject(dir, {}))).toEqual(['customers']);
      expect(tables(await loadDbtProject(dir, { selector: 'mine' }))).toEqual(['customers']);
    });

    it('result: reads the run_results.json of --state, a folder that needs no manifest.json for it', async () => {
      const dir = folder();
      const prod = folder();
      write(dir);
      artifact(join(prod, 'run_results.json'), 'run-results/v6', [
        { unique_id: 'model.shop.customers', status: 'error', compiled_code: 'select 1' },
      ]);
      expect(tables(await loadDbtProject(dir, { select: ['result:error+'] }, { state: prod }))).toEqual([
        'customers',
      ]);
      writeFileSync(join(prod, 'run_results.json'), '{"results": [');
      const cut = await refusal(loadDbtProject(dir, { select: ['result:error+'] }, { state: prod }));
      expect(cut).toMatchObject({ exitCode: 2, code: 'invalid_dbt_artifact' });
      expect(cut.message).toContain('run_results.json');
      const none = await refusal(loadDbtProject(dir, { select: ['result:error+'] }));
      expect(none).toMatchObject({ exitCode: 2, code: 'invalid_dbt_selector' });
      expect(none.message).toMatch(/run_results\.json/);
    });

    it("source_status: without the project's target/sources.json: exit 2, naming it, as dbt refuses", async () => {
      const dir = folder();
      const prod = folder();
      write(dir);
      artifact(join(prod, 'sources.json'), 'sources/v3', []);
      const error = await refusal(
        loadDbtProject(dir, { select: ['source_status:fresher+'] }, { state: prod }),
      );
      expect(error).toMatchObject({ exitCode: 2, code: 'invalid_dbt_selector' });
      expect(error.message).toMatch(/target\/sources\.json/);
      expect(error.message).not.toMatch(/in the --state folder/);
    });
  });

  it("reads a seed's columns from its CSV header when the folder is the project", async () => {
    const dir = folder();
    mkdirSync(join(dir, 'target'));
    mkdirSync(join(dir, 'seeds'));
    writeFileSync(join(dir, 'dbt_project.yml'), 'name: shop\n');
    writeFileSync(join(dir, 'seeds', 'raw_orders.csv'), 'id,"user id",status\n1,2,placed\n');
    const seed = {
      ...model('raw_orders'),
      unique_id: 'seed.shop.raw_orders',
      resource_type: 'seed',
      original_file_path: 'seeds/raw_orders.csv',
      config: { enabled: true, materialized: 'seed', column_types: { id: 'integer' } },
    };
    writeFileSync(join(dir, 'target', 'manifest.json'), JSON.stringify(manifest(seed)));
    const project = await loadDbtProject(dir, {});
    expect(project.declarations[0]?.columnsFrom).toBe('seed_file');
    expect(project.declarations[0]?.columns).toEqual([
      { name: 'id', type: 'integer' },
      { name: 'user id', type: 'unknown' },
      { name: 'status', type: 'unknown' },
    ]);
  });

  it('judges an older catalog.json by target/run_results.json; one that is not JSON is left out with a warning', async () => {
    const dir = folder();
    mkdirSync(join(dir, 'target'));
    const m = manifest(model('orders', { compiled_code: 'select 1 as order_id, 2 as customer_id' }));
    (m['metadata'] as Record<string, unknown>)['generated_at'] = '2026-02-01T10:00:00Z';
    writeFileSync(join(dir, 'target', 'manifest.json'), JSON.stringify(m));
    const older = catalog('2026-01-30T09:00:00Z', {
      'model.shop.orders': { order_id: 'integer', order_date: 'date' },
    });
    writeFileSync(join(dir, 'target', 'catalog.json'), JSON.stringify(older));
    const compiled = {
      metadata: {
        dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v6.json',
        generated_at: '2026-02-01T10:00:01Z',
      },
      args: { which: 'compile' },
      results: [
        {
          unique_id: 'model.shop.orders',
          status: 'success',
          message: null,
          adapter_response: {},
          compiled_code: 'select 1',
        },
      ],
      elapsed_time: 0.5,
    };
    writeFileSync(join(dir, 'target', 'run_results.json'), JSON.stringify(compiled));
    const kept = await loadDbtProject(dir, {});
    expect(kept.declarations[0]?.columns.map((c) => c.name)).toEqual(['order_id', 'order_date']);
    expect(kept.warnings.join('\n')).toMatch(/not rebuilt since the catalog: .*\(dbt compile, /);
    // Cut half-way (dbt stopped while writing it): the catalog is judged without it.
    writeFileSync(join(dir, 'target', 'run_results.json'), JSON.stringify(compiled).slice(0, 80));
    const cut = await loadDbtProject(dir, {});
    expect(cut.declarations[0]?.columns.map((c) => c.name)).toEqual(['order_id', 'customer_id']);
    expect(cut.warnings.join('\n')).toContain(`${join(dir, 'target', 'run_results.json')} is not read (`);
  });

  it("reads no seed file outside the project folder, not even a sibling folder's whose name starts the same", async () => {
    const dir = folder();
    const sibling = `${dir}-other`;
    made.push(sibling);
    mkdirSync(join(dir, 'target'));
    mkdirSync(sibling);
    writeFileSync(join(dir, 'dbt_project.yml'), 'name: shop\n');
    writeFileSync(join(sibling, 'secret.csv'), 'api_key,password\nk,p\n');
    const seed = {
      ...model('raw_secret'),
      unique_id: 'seed.shop.raw_secret',
      resource_type: 'seed',
      original_file_path: `../${sibling.split('/').at(-1) ?? ''}/secret.csv`,
      config: { enabled: true, materialized: 'seed' },
    };
    writeFileSync(join(dir, 'target', 'manifest.json'), JSON.stringify(manifest(seed)));
    const project = await loadDbtProject(dir, {});
    expect(project.declarations).toEqual([]);
    expect(project.refusals[0]?.reason).toMatch(/header of its CSV file, which was not read/);
  });

  it('csvHeader reads quoted names; parseCsv quoted line breaks and blank lines', () => {
    expect(parseCsv('a,b\n1,"two\nlines"\n\n3,\n')).toEqual([
      ['a', 'b'],
      ['1', 'two\nlines'],
      ['3', ''],
    ]);
    expect(csvHeader('a,"b ""x""",c\r\n1,2,3')).toEqual(['a', 'b "x"', 'c']);
  });

  it('the jaffle project: catalog columns, seeds from seeds/*.csv', needs(noSharedFixtures), async () => {
    const project = await loadDbtProject(`${sharedFixturesDir}real/dbt-projects/manoty_jaffle_duckdb`, {});
    expect(project.refusals).toEqual([]);
    expect(project.declarations.filter((d) => d.resourceType === 'seed').map((d) => d.columnsFrom)).toEqual([
      'catalog',
      'catalog',
      'catalog',
    ]);
    expect(project.adapter).toBe('duckdb');
  });

  it('a copy of a real manifest in a temporary target/', needs(noSharedFixtures), async () => {
    const dir = folder();
    mkdirSync(join(dir, 'target'));
    copyFileSync(
      `${sharedFixturesDir}real/dbt/ol_postgres.manifest.json`,
      join(dir, 'target', 'manifest.json'),
    );
    const project = await loadDbtProject(dir, { select: ['customers'] });
    expect(project.declarations.map((d) => d.name)).toEqual(['customers']);
  });
});
