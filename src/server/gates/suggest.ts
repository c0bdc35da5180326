// `gate suggest`: predicate stubs proposed from profiling the rows with SQL (value patterns, null
// rates, distinct counts, numeric ranges), each with the figures that justify it. A column's name
// never proposes anything: an e-mail check needs values that look like e-mails.
import { stringify } from 'yaml';
import type { CustomPredicate, FieldOverride, Gate1Document, PatternCheck } from '../../core/gate1/index.js';
import { checkPredicateSql, validateGate1 } from '../../core/gate1/index.js';
import type { Db } from '../db/handle.js';
import { quoteIdent } from '../warehouse.js';
import { percent } from './format.js';
import { Params } from './relation.js';
import { gateRead, noState } from './snapshot.js';
import type { GateTable } from './table.js';

/** Value shapes looked for in text columns; the regex is the one a stub then declares. */
export const VALUE_PATTERNS = [
  { id: 'email', label: 'an e-mail address', regex: '^[^@ ]+@[^@ ]+\\.[^@ ]+$' },
  { id: 'digits', label: 'digits only', regex: '^[0-9]+$' },
] as const;

/** Share of non-null values a pattern must cover to be proposed; at 100% it is proposed as HARD_FAIL. */
export const PATTERN_MIN_SHARE = 0.9;

export interface ColumnProfile {
  name: string;
  rows: number;
  nulls: number;
  distinct: number;
  /** Non-null values matching each VALUE_PATTERNS id (text columns). */
  matches?: Record<string, number>;
  min?: number;
  max?: number;
}

export interface Suggestion {
  kind: 'pattern' | 'custom' | 'fieldOverride';
  /** The stub's name (pattern, custom) or its field (fieldOverride). */
  name: string;
  column: string;
  justification: string;
}

export interface SuggestionSet {
  tableId: string;
  yaml: string;
  suggestions: Suggestion[];
  /** Observations that gate1.yml cannot express (e.g. a candidate grain key). */
  notes: Array<{ column: string; note: string }>;
  profile: ColumnProfile[];
}

const NUMERIC = new Set(['integer', 'numeric']);
const PLAIN_IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

export async function suggestGate1(db: Db, table: GateTable): Promise<SuggestionSet> {
  const profile = await gateRead(db, table, {
    state: noState,
    run: async (tx, relation) => {
      const profiles: ColumnProfile[] = [];
      for (const column of table.columns.filter((c) => relation.present.includes(c.name))) {
        const params = new Params();
        const id = quoteIdent(column.name);
        const numeric = NUMERIC.has(column.type);
        const extra = numeric
          ? `, min(${id})::float8 AS min, max(${id})::float8 AS max`
          : VALUE_PATTERNS.map(
              (p) =>
                `, count(*) FILTER (WHERE ${id}::text ~ ${params.add(p.regex)}::text)::float8 AS "${p.id}"`,
            ).join('');
        const cte = relation.rowsCte(params);
        const [row] = await tx.query<Record<string, number | null>>(
          `${cte} SELECT count(*)::float8 AS rows, count(*) FILTER (WHERE ${id} IS NULL)::float8 AS nulls,
                       count(DISTINCT ${id})::float8 AS distinct ${extra} FROM gate_rows`,
          params.values,
        );
        profiles.push(toProfile(column.name, numeric, row ?? {}));
      }
      return profiles;
    },
  });
  return propose(table, profile);
}

function toProfile(name: string, numeric: boolean, row: Record<string, number | null>): ColumnProfile {
  const profile: ColumnProfile = {
    name,
    rows: row.rows ?? 0,
    nulls: row.nulls ?? 0,
    distinct: row.distinct ?? 0,
  };
  if (numeric) {
    if (row.min !== null && row.min !== undefined) profile.min = row.min;
    if (row.max !== null && row.max !== undefined) profile.max = row.max;
  } else {
    profile.matches = Object.fromEntries(VALUE_PATTERNS.map((p) => [p.id, row[p.id] ?? 0]));
  }
  return profile;
}

const pct = (n: number, of: number) => percent(n / of);
const roundUp = (rate: number) => Math.min(1, Math.ceil(rate * 100) / 100);

function propose(table: GateTable, profile: ColumnProfile[]): SuggestionSet {
  const patternChecks: PatternCheck[] = [];
  const customPredicates: CustomPredicate[] = [];
  const fieldOverrides: FieldOverride[] = [];
  const suggestions: Suggestion[] = [];
  const notes: SuggestionSet['notes'] = [];
  const columns = table.columns.map((c) => c.name);
  for (const p of profile) {
    const nonNull = p.rows - p.nulls;
    for (const pattern of VALUE_PATTERNS) {
      const matched = p.matches?.[pattern.id] ?? 0;
      if (nonNull === 0 || matched / nonNull < PATTERN_MIN_SHARE) continue;
      const name = `${p.name}_${pattern.id}_format`;
      const all = matched === nonNull;
      patternChecks.push({
        name,
        column: p.name,
        regex: pattern.regex,
        severity: all ? 'HARD_FAIL' : 'WARN',
      });
      suggestions.push({
        kind: 'pattern',
        name,
        column: p.name,
        justification: `${matched} of ${nonNull} non-null values of ${p.name} (${pct(matched, nonNull)}) are ${pattern.label}; ${
          all
            ? 'every value matches, so a mismatch is proposed as HARD_FAIL'
            : 'the rest do not, so it is proposed as WARN: review them first'
        }.`,
      });
      break;
    }
    if (p.nulls > 0) {
      const rate = p.nulls / p.rows;
      const warn = roundUp(rate);
      const fail = roundUp(Math.min(1, rate * 2));
      fieldOverrides.push({ field: p.name, nullRate: { warn, fail } });
      suggestions.push({
        kind: 'fieldOverride',
        name: p.name,
        column: p.name,
        justification: `${p.nulls} of ${p.rows} rows (${pct(p.nulls, p.rows)}) have no ${p.name}: warn above today's rate (${warn}), fail at twice it (${fail}).`,
      });
    }
    if (p.min !== undefined && p.min >= 0 && PLAIN_IDENTIFIER.test(p.name)) {
      const sql = `${p.name} >= 0`;
      if (checkPredicateSql(sql, { columns }).every((f) => f.severity !== 'error')) {
        const name = `${p.name}_not_negative`;
        customPredicates.push({ name, sql, severity: 'SOFT_FAIL' });
        suggestions.push({
          kind: 'custom',
          name,
          column: p.name,
          justification: `All ${nonNull} non-null values of ${p.name} are between ${p.min} and ${p.max ?? p.min}: none is negative.`,
        });
      }
    }
    if (p.rows > 1 && p.nulls === 0 && p.distinct === p.rows) {
      notes.push({
        column: p.name,
        note: `All ${p.rows} values of ${p.name} are distinct and none is null: a candidate grain key (declare it as grainKeyColumns in the definition; Gate 1 then checks its uniqueness).`,
      });
    }
  }
  const document: Gate1Document = {
    ...(patternChecks.length > 0 ? { patternChecks } : {}),
    ...(customPredicates.length > 0 ? { customPredicates } : {}),
    ...(fieldOverrides.length > 0 ? { fieldOverrides } : {}),
  };
  const yaml = Object.keys(document).length > 0 ? stringify(document) : '{}\n';
  const errors = validateGate1(yaml, { fileName: 'gate1.yml', columns }).diagnostics.filter(
    (d) => d.severity === 'error',
  );
  if (errors.length > 0)
    throw new Error(`suggestions do not validate: ${errors.map((e) => e.message).join('; ')}`);
  return { tableId: table.id, yaml, suggestions, notes, profile };
}
