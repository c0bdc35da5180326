// Gate 1 as real SQL on the table's rows (relation.ts): the six baseline predicates, always, then
// the declared patternChecks (`NOT (column ~ regex)`, the regex bound as a parameter) and
// customPredicates (`WHERE NOT (<sql>)`, only SQL that passes checkPredicateSql with the table's
// columns). Identifiers are quoted, values bound; nothing is inferred from a column's name.
import type { Gate1Document, Gate1Severity, UniqueCheck } from '../../core/gate1/index.js';
import { checkPredicateSql, checkRegex } from '../../core/gate1/index.js';
import type { Clock } from '../clock.js';
import type { Db, Queryable } from '../db/handle.js';
import { quoteIdent, quoteSource } from '../warehouse.js';
import { percent, plural } from './format.js';
import { currentGate1, rulesOf } from './gate1-store.js';
import type { Relation } from './relation.js';
import { Params } from './relation.js';
import { attempt } from './read-only.js';
import { gateRead, rowsDigest } from './snapshot.js';
import type { SampleSpec } from './sample.js';
import { newSampleSeed } from './sample.js';
import type { Column } from '../records/columns.js';
import type { GateTable, TableVersions } from './table.js';
import { parseReference } from './table.js';

export type CheckKind = 'baseline' | 'pattern' | 'custom';

export interface CheckResult {
  name: string;
  kind: CheckKind;
  severity: Gate1Severity;
  passed: boolean;
  /** Rows that break the check; null when the check counts no rows (presence, skipped, errors). */
  failingRows: number | null;
  detail: string;
  /** Present (true) when the check did not run, with the reason in `detail`. */
  skipped?: true;
  column?: string;
}

export interface SampleInfo {
  spec: string;
  kind: SampleSpec['kind'];
  rows: number;
  chunks?: number;
  /** random: the seed that chose the rows. */
  seed?: string;
  /** How the rows were drawn, and so what the sample cost (one pass, a LIMIT, or one sort). */
  method?: string;
}

export interface Gate1Proof {
  gate: 1;
  tableId: string;
  passed: boolean;
  results: CheckResult[];
  /** Names of failed HARD_FAIL checks: what fails the gate. */
  failedPredicates: string[];
  /** Rows the checks read (the sample's size when sampled). */
  rowsChecked: number;
  sample: SampleInfo | null;
  tableVersion: TableVersions;
  ranAt: string;
}

/** Null-rate thresholds when gate1.yml has no fieldOverride for a column: a rate above `fail` fails. */
export const DEFAULT_NULL_RATE = {
  required: { warn: 0, fail: 0 },
  optional: { warn: 0.1, fail: 0.5 },
} as const;

export interface RunOptions {
  sample?: SampleSpec;
  clock: Clock;
}

/**
 * Runs Gate 1 on one snapshot: the table's versions and its current gate1.yml are read in the same
 * read-only snapshot as the rows, so the proof's `tableVersion` is exactly what was checked.
 */
export async function runGate1(db: Db, table: GateTable, options: RunOptions): Promise<Gate1Proof> {
  return (await checkGate1(db, table, options)).proof;
}

/** Runs Gate 1 as runGate1 does, and takes the digest of the rows checked in the same snapshot (certify). */
export async function runGate1WithDigest(
  db: Db,
  table: GateTable,
  options: RunOptions,
): Promise<{ proof: Gate1Proof; rowsDigest: string }> {
  const { proof, digest } = await checkGate1(db, table, options, true);
  return { proof, rowsDigest: digest ?? '' };
}

async function checkGate1(
  db: Db,
  table: GateTable,
  options: RunOptions,
  withDigest = false,
): Promise<{ proof: Gate1Proof; digest: string | null }> {
  const seed = options.sample?.kind === 'random' ? newSampleSeed() : undefined;
  const { results, versions, digest, method } = await gateRead(db, table, {
    state: async (tx) => ({
      // The contract revision of the grain the checks use (the table as loaded): a contract changed since
      // leaves the proof stale, so the submission refuses it (409 table_changed), never records it fresh.
      versions: await versionsOf(tx, table.id, table.versions.contract),
      current: await currentGate1(tx, table.id),
      digest: withDigest ? await rowsDigest(tx, table) : null,
    }),
    run: async (tx, relation, state) => {
      const document = rulesOf(
        state.current?.content ?? null,
        table.columns.map((c) => c.name),
      );
      const results = await new CheckRun(tx, table, relation).all(document);
      return { results, versions: state.versions, digest: state.digest, method: relation.sampleMethod };
    },
    rows: {
      ...(options.sample ? { sample: options.sample } : {}),
      ...(seed ? { seed } : {}),
    },
  });
  const checked = results.rows;
  const failedPredicates = results.checks
    .filter((r) => !r.passed && r.severity === 'HARD_FAIL')
    .map((r) => r.name);
  const proof: Gate1Proof = {
    gate: 1,
    tableId: table.id,
    passed: failedPredicates.length === 0,
    results: results.checks,
    failedPredicates,
    rowsChecked: checked,
    sample: options.sample ? sampleInfo(options.sample, seed, method) : null,
    tableVersion: versions,
    ranAt: new Date(options.clock()).toISOString(),
  };
  return { proof, digest };
}

async function versionsOf(tx: Queryable, tableId: string, checkedContract?: number): Promise<TableVersions> {
  const [row] = await tx.query<{ definition: number; gate1: number; data: number; contract: number }>(
    `SELECT definition_version AS definition, gate1_version AS gate1, data_version AS data,
            contract_version AS contract FROM gds.tables WHERE id = $1`,
    [tableId],
  );
  if (!row) throw new Error(`runGate1: no table ${tableId}`);
  return checkedContract === undefined ? row : { ...row, contract: checkedContract };
}

function sampleInfo(sample: SampleSpec, seed: string | undefined, method: string | undefined): SampleInfo {
  return {
    spec: sample.spec,
    kind: sample.kind,
    rows: sample.rows,
    ...(sample.kind === 'chunks' ? { chunks: sample.chunks } : {}),
    ...(seed ? { seed } : {}),
    ...(method ? { method } : {}),
  };
}

class CheckRun {
  readonly checks: CheckResult[] = [];
  rows = 0;

  constructor(
    private readonly tx: Queryable,
    private readonly table: GateTable,
    private readonly relation: Relation,
  ) {}

  async all(document: Gate1Document): Promise<{ checks: CheckResult[]; rows: number }> {
    if (!this.relation.exists) {
      this.checks.push(
        baseline('record_count', false, null, `The warehouse object ${this.relation.label} does not exist.`),
        baseline(
          'column_presence',
          false,
          null,
          `The warehouse object ${this.relation.label} does not exist.`,
        ),
      );
      return { checks: this.checks, rows: 0 };
    }
    await this.recordCount();
    this.columnPresence();
    await this.grainUniqueness();
    await this.nullRates(document);
    await this.referentialIntegrity();
    await this.numericBounds();
    for (const check of document.patternChecks ?? []) await this.pattern(check);
    for (const check of document.customPredicates ?? []) await this.custom(check);
    for (const check of document.uniqueChecks ?? []) await this.uniqueness(check);
    return { checks: this.checks, rows: this.rows };
  }

  /** Runs `SELECT <select> FROM gate_rows <rest>` and returns its first row, or the SQL error. */
  private async select<T>(build: (p: Params) => string) {
    return attempt(this.tx, async () => {
      const params = new Params();
      const cte = this.relation.rowsCte(params);
      const sql = `${cte} ${build(params)}`;
      const [row] = await this.tx.query<T>(sql, params.values);
      return row as T;
    });
  }

  /**
   * Counts are read as float8 here and in every gate: a number on both engines and exact to 2^53 rows, where
   * `::int` failed the check past 2^31 (integer out of range) and a bigint is a string from node-postgres.
   */
  private async count(build: (p: Params) => string) {
    const outcome = await this.select<{ n: number }>(
      (p) => `SELECT count(*)::float8 AS n FROM gate_rows ${build(p)}`,
    );
    return outcome.ok ? { ok: true as const, n: outcome.value.n } : outcome;
  }

  private async recordCount() {
    const outcome = await this.count(() => '');
    if (!outcome.ok) {
      this.checks.push(baseline('record_count', false, null, `Could not count the rows: ${outcome.error}`));
      return;
    }
    this.rows = outcome.n;
    this.checks.push(
      baseline(
        'record_count',
        outcome.n > 0,
        outcome.n > 0 ? 0 : null,
        outcome.n > 0
          ? `${plural(outcome.n, 'row')} in ${this.relation.label}.`
          : `${this.relation.label} has no rows.`,
      ),
    );
  }

  private columnPresence() {
    const missing = this.relation.missing;
    this.checks.push(
      baseline(
        'column_presence',
        missing.length === 0,
        null,
        missing.length === 0
          ? `All ${plural(this.table.columns.length, 'registered column')} exist in ${this.relation.label}.`
          : `Registered columns missing from ${this.relation.label}: ${missing.join(', ')}.`,
      ),
    );
  }

  private async grainUniqueness() {
    const keys = this.table.grainKeyColumns;
    if (keys.length === 0) {
      this.checks.push(
        skipped(
          'grain_uniqueness',
          'No grain key columns are declared on the definition (grainKeyColumns); nothing to check.',
        ),
      );
      return;
    }
    const absent = keys.filter((k) => !this.relation.present.includes(k));
    if (absent.length > 0) {
      this.checks.push(
        baseline(
          'grain_uniqueness',
          false,
          null,
          `Grain key columns missing from the warehouse object: ${absent.join(', ')}.`,
        ),
      );
      return;
    }
    const list = keys.map(quoteIdent).join(', ');
    const outcome = await this.select<{ keys: number; rows: number }>(
      () => `SELECT count(*)::float8 AS keys, coalesce(sum(n), 0)::float8 AS rows
               FROM (SELECT count(*) AS n FROM gate_rows GROUP BY ${list} HAVING count(*) > 1) AS d`,
    );
    const label = `(${keys.join(', ')})`;
    if (!outcome.ok) {
      this.checks.push(
        baseline('grain_uniqueness', false, null, `Could not check ${label}: ${outcome.error}`),
      );
      return;
    }
    const { keys: dupKeys, rows } = outcome.value;
    this.checks.push(
      baseline(
        'grain_uniqueness',
        dupKeys === 0,
        rows,
        dupKeys === 0
          ? `Every row has a distinct grain key ${label}.`
          : `${plural(dupKeys, 'grain key value')} of ${label} appear more than once, over ${plural(rows, 'row')}.`,
      ),
    );
  }

  private async nullRates(document: Gate1Document) {
    const columns = this.table.columns.filter((c) => this.relation.present.includes(c.name));
    if (columns.length === 0) return;
    const outcome = await this.select<Record<string, number>>(
      () =>
        `SELECT count(*)::float8 AS __total, ${columns
          .map((c, i) => `count(*) FILTER (WHERE ${quoteIdent(c.name)} IS NULL)::float8 AS n${i}`)
          .join(', ')} FROM gate_rows`,
    );
    const overrides = new Map((document.fieldOverrides ?? []).map((o) => [o.field, o.nullRate]));
    for (const [i, column] of columns.entries()) {
      const name = `null_rate.${column.name}`;
      if (!outcome.ok) {
        this.checks.push({
          ...baseline(name, false, null, `Could not count nulls: ${outcome.error}`),
          column: column.name,
        });
        continue;
      }
      const total = outcome.value.__total ?? 0;
      const nulls = outcome.value[`n${i}`] ?? 0;
      const rate = total === 0 ? 0 : nulls / total;
      const override = overrides.get(column.name);
      const limits = override ?? (column.required ? DEFAULT_NULL_RATE.required : DEFAULT_NULL_RATE.optional);
      const source = override
        ? 'gate1.yml fieldOverrides'
        : column.required
          ? 'default for a required column'
          : 'default for an optional column';
      const level = rate > limits.fail ? 'HARD_FAIL' : rate > limits.warn ? 'WARN' : null;
      this.checks.push({
        name,
        kind: 'baseline',
        severity: level ?? 'HARD_FAIL',
        passed: level === null,
        failingRows: nulls,
        detail: `${plural(nulls, 'null')} in ${plural(total, 'row')} (${percent(rate)}); warn above ${percent(limits.warn)}, fail above ${percent(limits.fail)} (${source}).`,
        column: column.name,
      });
    }
  }

  private async referentialIntegrity() {
    const declared = this.table.columns.filter(
      (c): c is Column & { references: string } => typeof c.references === 'string',
    );
    if (declared.length === 0) {
      this.checks.push(
        skipped(
          'referential_integrity',
          'No column of the definition declares references: schema.table.column; nothing to check.',
        ),
      );
      return;
    }
    for (const column of declared) {
      const name = `referential_integrity.${column.name}`;
      const target = parseReference(column.references);
      const problem = !target
        ? `"${column.references}" is not schema.table.column.`
        : !this.table.warehouseSchemas.includes(target.schema)
          ? `${target.schema} is not the schema of one of the workspace's connectors.`
          : !this.relation.present.includes(column.name)
            ? `${column.name} is missing from the warehouse object.`
            : null;
      if (problem || !target) {
        this.checks.push({
          ...baseline(name, false, null, `Cannot check ${column.name} → ${column.references}: ${problem}`),
          column: column.name,
        });
        continue;
      }
      const parent = quoteSource(`${target.schema}.${target.table}`);
      const outcome = await this.count(
        () => `AS r WHERE r.${quoteIdent(column.name)} IS NOT NULL
                 AND NOT EXISTS (SELECT 1 FROM ${parent} AS p WHERE p.${quoteIdent(target.column)} = r.${quoteIdent(column.name)})`,
      );
      this.checks.push({
        ...(outcome.ok
          ? baseline(
              name,
              outcome.n === 0,
              outcome.n,
              outcome.n === 0
                ? `Every non-null ${column.name} exists in ${column.references}.`
                : `Rows whose ${column.name} is not in ${column.references}: ${outcome.n}.`,
            )
          : baseline(
              name,
              false,
              null,
              `Could not check ${column.name} → ${column.references}: ${outcome.error}`,
            )),
        column: column.name,
      });
    }
  }

  private async numericBounds() {
    const declared = this.table.columns.filter((c) => typeof c.min === 'number' || typeof c.max === 'number');
    if (declared.length === 0) {
      this.checks.push(
        skipped('numeric_bounds', 'No column of the definition declares min or max; nothing to check.'),
      );
      return;
    }
    for (const column of declared) {
      const name = `numeric_bounds.${column.name}`;
      const range = `[${column.min ?? '-∞'}, ${column.max ?? '∞'}]`;
      if (!this.relation.present.includes(column.name)) {
        this.checks.push({
          ...baseline(name, false, null, `${column.name} is missing from the warehouse object.`),
          column: column.name,
        });
        continue;
      }
      const outcome = await this.count((p) => {
        const id = quoteIdent(column.name);
        const tests = [
          ...(typeof column.min === 'number' ? [`${id} < ${p.add(column.min)}::numeric`] : []),
          ...(typeof column.max === 'number' ? [`${id} > ${p.add(column.max)}::numeric`] : []),
        ];
        return `WHERE ${tests.join(' OR ')}`;
      });
      this.checks.push({
        ...(outcome.ok
          ? baseline(
              name,
              outcome.n === 0,
              outcome.n,
              outcome.n === 0
                ? `Every ${column.name} is within ${range}.`
                : `Rows whose ${column.name} is outside ${range}: ${outcome.n}.`,
            )
          : baseline(name, false, null, `Could not check the bounds of ${column.name}: ${outcome.error}`)),
        column: column.name,
      });
    }
  }

  private async pattern(check: { name: string; column: string; regex: string; severity: Gate1Severity }) {
    const refused = checkRegex(check.regex).filter((p) => p.severity === 'error');
    const base = {
      name: check.name,
      kind: 'pattern' as const,
      severity: check.severity,
      column: check.column,
    };
    if (refused.length > 0 || !this.relation.present.includes(check.column)) {
      const why = refused[0]?.message ?? `column ${check.column} is missing from the rows`;
      this.checks.push({ ...base, passed: false, failingRows: null, detail: `Not run: ${why}.` });
      return;
    }
    const outcome = await this.count(
      (p) => `WHERE NOT (${quoteIdent(check.column)}::text ~ ${p.add(check.regex)}::text)`,
    );
    this.checks.push(
      outcome.ok
        ? {
            ...base,
            passed: outcome.n === 0,
            failingRows: outcome.n,
            detail:
              outcome.n === 0
                ? `Every non-null ${check.column} matches the pattern.`
                : `Rows whose ${check.column} does not match the pattern: ${outcome.n}.`,
          }
        : { ...base, passed: false, failingRows: null, detail: `The check failed to run: ${outcome.error}` },
    );
  }

  /**
   * A uniqueCheck: no two rows share the columns' values; rows with a NULL among them are not compared, unless
   * `nullsDistinct: false` (NULL is then a value like any other).
   */
  private async uniqueness(check: UniqueCheck) {
    const base = { name: check.name, kind: 'custom' as const, severity: check.severity };
    const absent = check.columns.filter((c) => !this.relation.present.includes(c));
    if (absent.length > 0) {
      this.checks.push({
        ...base,
        passed: false,
        failingRows: null,
        detail: `Not run: column${absent.length === 1 ? '' : 's'} ${absent.join(', ')} missing from the rows.`,
      });
      return;
    }
    const list = check.columns.map(quoteIdent).join(', ');
    const present =
      check.nullsDistinct === false
        ? 'true'
        : check.columns.map((c) => `${quoteIdent(c)} IS NOT NULL`).join(' AND ');
    const outcome = await this.select<{ keys: number; rows: number }>(
      () => `SELECT count(*)::float8 AS keys, coalesce(sum(n), 0)::float8 AS rows
               FROM (SELECT count(*) AS n FROM gate_rows WHERE ${present}
                      GROUP BY ${list} HAVING count(*) > 1) AS d`,
    );
    const label = `(${check.columns.join(', ')})`;
    this.checks.push(
      outcome.ok
        ? {
            ...base,
            passed: outcome.value.keys === 0,
            failingRows: outcome.value.rows,
            detail:
              outcome.value.keys === 0
                ? `No two rows share a value of ${label}.`
                : `${plural(outcome.value.keys, 'value')} of ${label} appear more than once, over ${plural(outcome.value.rows, 'row')}.`,
          }
        : { ...base, passed: false, failingRows: null, detail: `The check failed to run: ${outcome.error}` },
    );
  }

  private async custom(check: { name: string; sql: string; severity: Gate1Severity }) {
    const base = { name: check.name, kind: 'custom' as const, severity: check.severity };
    const refused = checkPredicateSql(check.sql, { columns: this.relation.present }).filter(
      (f) => f.severity === 'error',
    );
    if (refused.length > 0) {
      this.checks.push({
        ...base,
        passed: false,
        failingRows: null,
        detail: `Not run: ${refused[0]?.message ?? 'refused'}.`,
      });
      return;
    }
    // Same semantics as a CHECK constraint: a row fails when the predicate is false (null passes).
    const outcome = await this.count(() => `WHERE NOT (${check.sql})`);
    this.checks.push(
      outcome.ok
        ? {
            ...base,
            passed: outcome.n === 0,
            failingRows: outcome.n,
            detail:
              outcome.n === 0
                ? 'No row breaks the predicate.'
                : `Rows that break the predicate: ${outcome.n}.`,
          }
        : {
            ...base,
            passed: false,
            failingRows: null,
            detail: `The predicate failed to run: ${outcome.error}`,
          },
    );
  }
}

function baseline(name: string, passed: boolean, failingRows: number | null, detail: string): CheckResult {
  return { name, kind: 'baseline', severity: 'HARD_FAIL', passed, failingRows, detail };
}

function skipped(name: string, detail: string): CheckResult {
  return { ...baseline(name, true, null, detail), skipped: true };
}
