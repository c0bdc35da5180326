// A generated dbt project of N models for the bench (the 2,000-model rows), and the reader's own
// rows: declareDbtProject on the largest real manifest (99 models) and on generated 200- and 2,000-model ones.
//
//   import { generateDbtProject, writeDbtProject } from './dbt-manifest.js';
//   const { manifest, catalog } = generateDbtProject(2_000);          // manifest v12 (+ catalog v1)
//   const dir = writeDbtProject(2_000);                                // a folder with target/manifest.json
//
// The project is layered as dbt projects are: seeds, staging models over them, intermediate models joining
// two staging ones, marts over two intermediate ones. Every model has 8 to 14 columns (an id, a parent's
// id, a status, an amount, dates, …), compiled SQL ending `select * from final` through CTEs, columns
// documented in its properties (half with data_type), and tests: unique and not_null on its id, not_null
// and relationships on its parent id, accepted_values on its status, expression_is_true on its amount for a
// third of them, accepted_range for a fifth, a recency test gds does not map for a tenth, and one singular
// test per 50 models. As a real manifest has them, it also holds the macros of dbt, its adapter and dbt_utils
// (about 650, 0.9 MB: the real manifests of ../shared/fixtures hold 470-1,220 macros, 0.5-1.4 MB, most of
// each file) and the parent and child maps of every node, which gds reads past without keeping.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { declareDbtProject, prepareDbtReader } from '../../src/core/dbt/project.js';
import { loadDbtProject } from '../../src/services/dbt-project.js';
import { median } from './lib/measure.js';
import type { BenchModule, BenchRow } from './types.js';

type Entry = Record<string, unknown>;

export interface GeneratedDbtProject {
  manifest: Entry;
  catalog: Entry;
  /** Unique ids of the models, in order. */
  models: string[];
}

export interface GenerateOptions {
  /** `metadata.adapter_type`; default postgres. */
  adapter?: string;
  /** The relations' schema; default analytics. */
  schema?: string;
  project?: string;
}

const EXTRA_COLUMNS: Array<[string, string]> = [
  ['created_at', 'timestamp'],
  ['updated_at', 'timestamp'],
  ['region', 'text'],
  ['channel', 'text'],
  ['quantity', 'integer'],
  ['discount', 'numeric'],
];

/** A deterministic dbt project of `count` models (see the head of this file). */
export function generateDbtProject(count: number, options: GenerateOptions = {}): GeneratedDbtProject {
  const project = options.project ?? 'bench_shop';
  const schema = options.schema ?? 'analytics';
  const database = 'dev';
  const nodes: Record<string, Entry> = {};
  const catalogNodes: Record<string, Entry> = {};
  const models: string[] = [];
  const seedCount = Math.max(3, Math.ceil(count / 50));
  const staging = Math.max(1, Math.round(count * 0.4));
  const intermediate = Math.max(1, Math.round(count * 0.3));
  const relation = (name: string) => `"${database}"."${schema}"."${name}"`;
  const catalogEntry = (id: string, name: string, columns: Array<[string, string]>) => {
    catalogNodes[id] = {
      metadata: { type: 'BASE TABLE', schema, name, database, comment: null, owner: null },
      columns: Object.fromEntries(
        columns.map(([column, type], i) => [column, { type, index: i + 1, name: column, comment: null }]),
      ),
      stats: {},
      unique_id: id,
    };
  };
  const seeds: string[] = [];
  for (let i = 0; i < seedCount; i++) {
    const name = `raw_source_${i}`;
    const id = `seed.${project}.${name}`;
    seeds.push(id);
    nodes[id] = {
      unique_id: id,
      resource_type: 'seed',
      name,
      alias: name,
      schema,
      database,
      package_name: project,
      fqn: [project, name],
      path: `${name}.csv`,
      original_file_path: `seeds/${name}.csv`,
      tags: [],
      config: { enabled: true, materialized: 'seed', column_types: {} },
      columns: {},
      depends_on: { macros: [], nodes: [] },
      description: `Raw extract ${i}.`,
      meta: {},
    };
    catalogEntry(id, name, [
      ['id', 'integer'],
      ['parent_id', 'integer'],
      ['status', 'text'],
      ['amount', 'numeric'],
      ['created_at', 'timestamp'],
    ]);
  }
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const layer = i < staging ? 'staging' : i < staging + intermediate ? 'intermediate' : 'marts';
    const prefix = layer === 'staging' ? 'stg' : layer === 'intermediate' ? 'int' : 'fct';
    const name = `${prefix}_entity_${i}`;
    const id = `model.${project}.${name}`;
    const parents =
      layer === 'staging'
        ? [seeds[i % seeds.length] ?? '']
        : layer === 'intermediate'
          ? [models[i % staging] ?? '', models[(i * 7) % staging] ?? '']
          : [models[staging + (i % intermediate)] ?? '', models[staging + ((i * 3) % intermediate)] ?? ''];
    const parentNames = parents.map((p) => p.split('.').at(-1) ?? '');
    const key = `${name}_id`;
    const extra = EXTRA_COLUMNS.slice(0, 2 + (i % 5));
    const columns: Array<[string, string]> = [
      [key, 'integer'],
      ['parent_id', 'integer'],
      ['status', 'text'],
      ['amount', 'numeric(12,2)'],
      ...extra,
    ];
    const compiled = [
      `with source as (\n    select * from ${relation(parentNames[0] ?? '')}\n),`,
      parentNames[1] && parentNames[1] !== parentNames[0]
        ? `other as (\n    select id as other_id from ${relation(parentNames[1])}\n),`
        : '',
      `renamed as (\n    select\n        id as ${key},\n        parent_id,\n        lower(status) as status,\n        cast(amount as numeric(12,2)) as amount,`,
      extra.map(([column]) => `        ${column}`).join(',\n'),
      "    from (select 1 as id, 1 as parent_id, 'a' as status, 1.0 as amount" +
        extra.map(([column, type]) => `, null::${type} as ${column}`).join('') +
        ') as s\n),',
      'final as (\n    select * from renamed\n)',
      'select * from final',
    ]
      .filter((part) => part !== '')
      .join('\n');
    nodes[id] = {
      unique_id: id,
      resource_type: 'model',
      name,
      alias: name,
      schema,
      database,
      package_name: project,
      fqn: [project, layer, name],
      path: `${layer}/${name}.sql`,
      original_file_path: `models/${layer}/${name}.sql`,
      tags: layer === 'marts' ? ['nightly'] : [],
      config: {
        enabled: true,
        materialized: layer === 'marts' ? 'table' : 'view',
        ...(i % 10 === 0 ? { meta: { gds: { intent: 'METRIC', allowed_consumers: ['HUMAN', 'AI'] } } } : {}),
      },
      columns: Object.fromEntries(
        columns.map(([column, type], c) => [
          column,
          {
            name: column,
            description: `The ${column} of ${name}.`,
            meta: {},
            data_type: c % 2 === 0 ? type : null,
            tags: [],
          },
        ]),
      ),
      depends_on: { macros: [], nodes: [...new Set(parents)] },
      refs: parentNames.map((p) => ({ name: p, package: null, version: null })),
      description: `${layer} model ${i}, one row per entity.`,
      meta: {},
      compiled: true,
      compiled_code: compiled,
      raw_code: compiled,
      relation_name: relation(name),
    };
    catalogEntry(
      id,
      name,
      columns.map(([column, type]) => [column, type.toUpperCase()]),
    );
    models.push(id);
    names.push(name);
    const test = (
      kind: string,
      suffix: string,
      kwargs: Entry,
      extraTest: { namespace?: string; column?: string; depends?: string[] } = {},
    ) => {
      const testName = `${kind}_${name}_${suffix}`;
      const testId = `test.${project}.${testName}.${(i * 7919 + suffix.length).toString(16).padStart(10, '0')}`;
      nodes[testId] = {
        unique_id: testId,
        resource_type: 'test',
        name: testName,
        alias: testName,
        schema: `${schema}_dbt_test__audit`,
        database,
        package_name: project,
        fqn: [project, layer, testName],
        path: `${testName}.sql`,
        original_file_path: `models/${layer}/schema.yml`,
        tags: [],
        config: {
          enabled: true,
          severity: 'ERROR',
          where: null,
          fail_calc: 'count(*)',
          warn_if: '!= 0',
          error_if: '!= 0',
        },
        test_metadata: {
          name: kind,
          namespace: extraTest.namespace ?? null,
          kwargs: {
            ...(extraTest.column ? { column_name: extraTest.column } : {}),
            model: `{{ get_where_subquery(ref('${name}')) }}`,
            ...kwargs,
          },
        },
        column_name: extraTest.column ?? null,
        attached_node: id,
        depends_on: { macros: [], nodes: extraTest.depends ?? [id] },
      };
    };
    test('unique', key, {}, { column: key });
    test('not_null', key, {}, { column: key });
    test('not_null', 'parent_id', {}, { column: 'parent_id' });
    if (layer !== 'staging' || i % 2 === 0) {
      const parent = parents[0] ?? '';
      const parentKey = parent.startsWith('seed.') ? 'id' : `${parentNames[0] ?? ''}_id`;
      test(
        'relationships',
        'parent_id',
        { to: `ref('${parentNames[0] ?? ''}')`, field: parentKey },
        { column: 'parent_id', depends: [parent, id] },
      );
    }
    test('accepted_values', 'status', { values: ['placed', 'shipped', 'returned'] }, { column: 'status' });
    if (i % 3 === 0)
      test('expression_is_true', 'amount', { expression: 'amount >= 0' }, { namespace: 'dbt_utils' });
    if (i % 5 === 0)
      test(
        'accepted_range',
        'amount',
        { min_value: 0, max_value: 100000 },
        { namespace: 'dbt_utils', column: 'amount' },
      );
    if (i % 10 === 0)
      test(
        'recency',
        'created_at',
        { datepart: 'day', field: 'created_at', interval: 1 },
        { namespace: 'dbt_utils' },
      );
    if (i % 50 === 0) {
      const testId = `test.${project}.assert_${name}_positive`;
      nodes[testId] = {
        unique_id: testId,
        resource_type: 'test',
        name: `assert_${name}_positive`,
        package_name: project,
        fqn: [project, `assert_${name}_positive`],
        original_file_path: `tests/assert_${name}_positive.sql`,
        config: { enabled: true, severity: 'ERROR' },
        depends_on: { macros: [], nodes: [id] },
      };
    }
  }
  return {
    manifest: {
      metadata: {
        dbt_schema_version: 'https://schemas.getdbt.com/dbt/manifest/v12.json',
        dbt_version: '1.8.9',
        generated_at: '2026-01-01T00:00:00Z',
        invocation_id: '00000000-0000-0000-0000-000000000000',
        adapter_type: options.adapter ?? 'postgres',
        project_name: project,
      },
      nodes,
      sources: {},
      macros: generatedMacros(),
      docs: {},
      exposures: {},
      metrics: {},
      groups: {},
      selectors: {},
      disabled: {},
      ...nodeMaps(nodes),
      group_map: {},
      saved_queries: {},
      semantic_models: {},
      unit_tests: {},
    },
    catalog: {
      metadata: {
        dbt_schema_version: 'https://schemas.getdbt.com/dbt/catalog/v1.json',
        dbt_version: '1.8.9',
        generated_at: '2026-01-01T00:00:00Z',
      },
      nodes: catalogNodes,
      sources: {},
      errors: null,
    },
    models,
  };
}

/** The packages whose macros a real project's manifest holds, with how many each: dbt's own, its adapter's, dbt_utils. */
const MACRO_PACKAGES: Array<[string, number]> = [
  ['dbt', 420],
  ['dbt_postgres', 110],
  ['dbt_utils', 120],
];

/** About 650 macros of about 1.5 kB of JSON each, shaped as dbt 1.8 writes them (see the head of this file). */
function generatedMacros(): Record<string, Entry> {
  const macros: Record<string, Entry> = {};
  for (const [pkg, count] of MACRO_PACKAGES) {
    for (let i = 0; i < count; i++) {
      const name = `${pkg === 'dbt' ? 'default__' : `${pkg}__`}macro_${i}`;
      const id = `macro.${pkg}.${name}`;
      const lines = 3 + (i % 10);
      const body = Array.from(
        { length: lines },
        (_, line) =>
          `    {%- set column_${line} = adapter.quote(relation.identifier ~ "_${line}") -%}\n    {{ return(load_result('column_${line}').table) }}`,
      ).join('\n');
      const path = `macros/${i % 3 === 0 ? 'adapters' : i % 3 === 1 ? 'materializations' : 'utils'}/${name}.sql`;
      macros[id] = {
        name,
        resource_type: 'macro',
        package_name: pkg,
        path,
        original_file_path: path,
        unique_id: id,
        macro_sql: `{% macro ${name}(relation, column_name=none) -%}\n${body}\n{%- endmacro %}`,
        depends_on: { macros: i % 4 === 0 ? [`macro.dbt.default__macro_${(i * 7) % 420}`] : [] },
        description: '',
        meta: {},
        docs: { show: true, node_color: null },
        patch_path: null,
        arguments: [],
        created_at: 1767225600 + i / 1000,
        supported_languages: null,
      };
    }
  }
  return macros;
}

/** A manifest's parent_map and child_map: each node's parents (its depends_on.nodes) and, the other way, its children. */
function nodeMaps(nodes: Record<string, Entry>): {
  parent_map: Record<string, string[]>;
  child_map: Record<string, string[]>;
} {
  const parentMap: Record<string, string[]> = {};
  const childMap: Record<string, string[]> = {};
  for (const id of Object.keys(nodes)) childMap[id] = [];
  for (const [id, node] of Object.entries(nodes)) {
    const parents = ((node['depends_on'] as { nodes?: string[] } | undefined)?.nodes ?? []).slice().sort();
    parentMap[id] = parents;
    for (const parent of parents) (childMap[parent] ??= []).push(id);
  }
  for (const children of Object.values(childMap)) children.sort();
  return { parent_map: parentMap, child_map: childMap };
}

/** Writes a generated project's target/manifest.json (and catalog.json unless `catalog: false`) to a new folder. */
export function writeDbtProject(
  count: number,
  options: GenerateOptions & { catalog?: boolean; dir?: string } = {},
): string {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), `gds-dbt-${count}-`));
  const { manifest, catalog } = generateDbtProject(count, options);
  mkdirSync(join(dir, 'target'), { recursive: true });
  writeFileSync(join(dir, 'dbt_project.yml'), `name: ${options.project ?? 'bench_shop'}\nprofile: bench\n`);
  writeFileSync(join(dir, 'target', 'manifest.json'), JSON.stringify(manifest));
  if (options.catalog !== false) writeFileSync(join(dir, 'target', 'catalog.json'), JSON.stringify(catalog));
  return dir;
}

function timeMs(fn: () => unknown, runs: number): number {
  fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    fn();
    samples.push(performance.now() - start);
  }
  return median(samples);
}

export const run: BenchModule = async () => {
  const dbtReader = await prepareDbtReader();
  const rows: BenchRow[] = [];
  const section = 'dbt';
  const real = new URL(
    '../../../shared/fixtures/real/dbt/sfa_1.4.9_generate_snapshots.manifest.json',
    import.meta.url,
  );
  if (existsSync(real)) {
    const manifest = JSON.parse(readFileSync(real, 'utf8')) as unknown;
    rows.push({
      section,
      name: 'declareDbtProject, 99-model real manifest',
      value: `${timeMs(() => declareDbtProject({ manifest }, {}, dbtReader), 9).toFixed(1)} ms`,
      note: 'sfa (SQL Server, dbt 1.4.9, 121 nodes), parsed JSON in, median of 9',
    });
  }
  for (const count of [200, 2_000]) {
    const { manifest, catalog } = generateDbtProject(count);
    rows.push(
      {
        section,
        name: `declareDbtProject, ${count} generated models + catalog`,
        value: `${timeMs(() => declareDbtProject({ manifest, catalog }, {}, dbtReader), 5).toFixed(0)} ms`,
        note: 'columns from the catalog; tests mapped and validated; median of 5',
      },
      {
        section,
        name: `declareDbtProject, ${count} generated models, no catalog`,
        value: `${timeMs(() => declareDbtProject({ manifest }, {}, dbtReader), 5).toFixed(0)} ms`,
        note: "columns from each model's compiled SQL (PostgreSQL's parser); median of 5",
      },
    );
  }
  const dir = writeDbtProject(2_000);
  const samples: number[] = [];
  for (let i = 0; i < 3; i++) {
    const start = performance.now();
    await loadDbtProject(dir, { select: ['marts.*'] });
    samples.push(performance.now() - start);
  }
  rows.push({
    section,
    name: 'loadDbtProject, 2,000 models, --select marts.*',
    value: `${median(samples).toFixed(0)} ms`,
    note: `reading and parsing target/manifest.json (${(readFileSync(join(dir, 'target', 'manifest.json')).length / 1048576).toFixed(1)} MB) and catalog.json, then declaring; median of 3`,
  });
  return rows;
};
