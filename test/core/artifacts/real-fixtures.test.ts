// Every real file other people and tools wrote (../shared/fixtures/real/) through the parser that meets it:
// each is read right or refused for a reason that names what is wrong, never a one-letter message.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatArtifactError, parseArtifact } from '../../../src/core/artifacts/index.js';
import type { Dialect, ParseResult } from '../../../src/core/artifacts/index.js';
import { validateGate1 } from '../../../src/core/gate1/index.js';
import { sharedFixturesDir } from '../../helpers/fixtures.js';
import { needs, NO_SHARED_FIXTURES } from '../../helpers/skip.js';

const realDir = `${sharedFixturesDir}real/`;
const present = existsSync(realDir);
const filesOf = (sub: string) => (present ? readdirSync(`${realDir}${sub}`).sort() : []);
const read = (sub: string, file: string) => readFileSync(`${realDir}${sub}/${file}`, 'utf8');

/** The file name says which warehouse a view was written for (`snowflake_…`). */
const dialectOf = (file: string) => file.split('_')[0] as Dialect;

/** What a refusal must never be: a message that quotes one character, or says nothing. */
function expectNamedRefusal(file: string, result: ParseResult): void {
  if (result.ok) return;
  const text = formatArtifactError(file, result.error);
  expect(text, text).not.toMatch(/unexpected "."/);
  expect(result.error.message.length, text).toBeGreaterThan(25);
}

/** Files read right: the table, the source and some columns each must give. */
const EXPECTED: Record<string, { source?: string; table?: string; columns: string[]; count?: number }> = {
  'sql/postgres_hasura_platyplus_primary_keys.sql': {
    source: 'platyplus.primary_keys',
    columns: ['id', 'constraint', 'columns'],
  },
  'sql/postgres_uyuni_HistoryReport.sql': {
    table: 'historyreport',
    columns: [
      'mgm_id',
      'system_id',
      'event_id',
      'hostname',
      'event',
      'event_time',
      'status',
      'event_data',
      'synced_date',
    ],
  },
  'sql/redshift_v_generate_cancel_query.sql': {
    source: 'admin.v_generate_cancel_query',
    columns: ['pid', 'starttime', 'duration', 'user', 'querytxt', 'cancel_query'],
  },
  'sql/redshift_v_get_stored_proc_params.sql': {
    source: 'admin.v_get_stored_proc_params',
    columns: ['schema_name', 'proc_name', 'proc_id', 'order', 'parameter', 'data_type'],
  },
  'sql/snowflake_dbt_balboa_credits_by_warehouse.sql': {
    source: 'L2_SNOWFLAKE_USAGE.CREDITS_BY_WAREHOUSE',
    columns: ['START_TIME', 'CREDITS_USED', 'WAREHOUSE_NAME'],
  },
  'sql/snowflake_jfb_reference.store_warehouse.sql': {
    source: 'REFERENCE.STORE_WAREHOUSE',
    columns: [
      'STORE_ID',
      'STORE_TYPE',
      'STORE_NAME',
      'STORE_BRAND',
      'COUNTRY',
      'REGION',
      'WAREHOUSE_ID',
      'IS_RETAIL',
    ],
  },
  'sql/snowflake_jfb_breakage.fabletics_breakage_analysis_base.sql': {
    source: 'BREAKAGE.FABLETICS_BREAKAGE_ANALYSIS_BASE',
    columns: ['Reporting Credit Category', 'BRAND', 'Region', 'Country'],
    count: 34,
  },
  'sql/bigquery_bigquery_audit_logs_v1.sql': {
    source: 'dataset_id.bigquery_audit_logs_v1',
    columns: ['principalEmail', 'callerIp', 'serviceName', 'methodName'],
  },
  'sql/bigquery_sys_calendar.sql': {
    source: 'SYS_CALENDAR.CALENDAR',
    columns: ['calendar_date', 'day_of_week', 'day_of_month', 'day_of_year'],
    count: 15,
  },
  'yaml/dictionary_pasteque_myfeelback_nps.yml': { table: 'myfeelback_nps', columns: [], count: 11 },
};

/** Files refused, and what the refusal must name. */
const REFUSED: Record<string, RegExp> = {
  'sql/postgres_psql_lunatic_messages.sql': /syntax error at or near "\\"/,
  'sql/postgres_supabase_mercadolocalpr_posts_view.sql': /ALTER TABLE is not a view definition/,
  'sql/snowflake_jfb_data_model.fact_product_ref_cost_history.sql':
    /DROP VIEW IF EXISTS is not a view definition/,
  'sql/snowflake_jfb_sprinklr.listening_influencer_post.sql': /SELECT \*/,
  'sql/redshift_v_object_dependency.sql': /SELECT \*/,
  'yaml/dbt_manoty_staging_schema.yml': /dbt properties file.*stg_customers, stg_orders, stg_payments/,
  'gate/odcs_datacontractcli_adventureworks.odcs.yaml':
    /this is an ODCS data contract, not a gds table declaration/,
  'dbt/dap_v12_1.12.0.manifest.json': /this is a dbt manifest v12/,
};

describe(
  'real files written by other tools (../shared/fixtures/real)',
  needs(present ? undefined : NO_SHARED_FIXTURES),
  () => {
    it('holds files of every kind the tests below read', () => {
      for (const sub of ['sql', 'yaml', 'json', 'dbt', 'gate'])
        expect(filesOf(sub).length, sub).toBeGreaterThan(0);
    });

    it.each(filesOf('sql'))('sql/%s: read as its warehouse reads it, or refused by name', async (file) => {
      const result = await parseArtifact({
        fileName: file,
        content: read('sql', file),
        dialect: dialectOf(file),
      });
      expectNamedRefusal(file, result);
      if (!result.ok) expect(result.error.message).toContain('read as');
      check(`sql/${file}`, result);
    });

    it.each([...filesOf('yaml'), ...filesOf('gate')])('%s as an artifact', async (file) => {
      const sub = filesOf('yaml').includes(file) ? 'yaml' : 'gate';
      const result = await parseArtifact({ fileName: file, content: read(sub, file) });
      expectNamedRefusal(file, result);
      check(`${sub}/${file}`, result);
    });

    it.each([...filesOf('json'), ...filesOf('dbt')])('%s as a JSON artifact', async (file) => {
      const sub = filesOf('json').includes(file) ? 'json' : 'dbt';
      const result = await parseArtifact({ fileName: file, content: read(sub, file), kind: 'json' });
      expectNamedRefusal(file, result);
      check(`${sub}/${file}`, result);
    });

    it.each(filesOf('gate'))('gate/%s through gate validate: refused with positioned diagnostics', (file) => {
      const { diagnostics } = validateGate1(read('gate', file), { fileName: file });
      expect(diagnostics.length).toBeGreaterThan(0);
      for (const d of diagnostics) {
        expect(d.line).toBeGreaterThan(0);
        expect(d.message).not.toMatch(/unexpected "."/);
      }
    });

    it('dbt properties files: each model pushed with --model gives its columns', async () => {
      const result = await parseArtifact({
        fileName: 'schema.yml',
        content: read('yaml', 'dbt_balboa_stg_query_history.yml'),
        model: 'stg_query_history',
      });
      expect(result.ok && result.artifact.columns.slice(0, 2)).toEqual([
        { name: 'query_id' },
        { name: 'query_text' },
      ]);
      expect(result.ok && result.artifact.decisionContext).toBe(
        'Contains raw data on the history of executed queries.',
      );
    });
  },
);

function check(key: string, result: ParseResult): void {
  const expected = EXPECTED[key];
  if (expected) {
    if (!result.ok) throw new Error(`${key}: ${result.error.message}`);
    const { artifact } = result;
    if (expected.source) expect(`${artifact.source?.schema}.${artifact.source?.table}`).toBe(expected.source);
    if (expected.table) expect(artifact.table).toBe(expected.table);
    expect(artifact.columns.map((c) => c.name).slice(0, expected.columns.length)).toEqual(expected.columns);
    if (expected.count !== undefined) expect(artifact.columns).toHaveLength(expected.count);
  }
  const refused = REFUSED[key];
  if (refused) expect(result.ok ? 'read' : result.error.message).toMatch(refused);
}
