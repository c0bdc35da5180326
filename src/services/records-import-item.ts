// One input row of `gds records import` made into an item of a request body, after it is checked against the
// table's columns: a row that does not fit, or that no request could carry, is a problem instead.
import type { TableColumns } from '../contract/types.js';
import { REQUEST_BODY_LIMIT_BYTES } from '../core/artifact-bounds.js';
import { checkValues, describeProblems } from '../core/record-values.js';
import type { InputRow, RowError } from './records-input-row.js';
import { onOneLine } from '../core/terminal-text.js';

/** The bytes of a request body around its one row: `{"records":[` and `]}`. */
const MAX_BODY_FRAME = '{"records":[]}'.length;

export interface ItemRules {
  table: TableColumns;
  /** Whether the table has a column `id` (else an `id` field names the record a bulk-update item updates). */
  hasId: boolean;
  /** The key of an upsert; none: bulk-update. */
  key: string | undefined;
  /** In bulk mode: create every row, an `id` field dropped. */
  ignoreIds: boolean;
}

export type Item =
  { json: string; bytes: number; id?: string; problem?: undefined } | { problem: RowError['error'] };

export function itemOf(input: InputRow, rules: ItemRules): Item {
  const problem = input.problem ?? (input.values === undefined ? undefined : check(input.values, rules));
  if (problem !== undefined) return { problem };
  const values = { ...(input.values ?? {}) };
  let id: string | undefined;
  if ('id' in values && !rules.hasId) {
    if (rules.key === undefined && !rules.ignoreIds) id = String(values.id);
    delete values.id;
  }
  const json = JSON.stringify(
    rules.key !== undefined ? values : id === undefined ? { data: values } : { id, data: values },
  );
  const bytes = Buffer.byteLength(json);
  if (bytes + MAX_BODY_FRAME > REQUEST_BODY_LIMIT_BYTES) {
    // Alone in a request it would still be over the service's limit (413): no batch can carry it.
    return {
      problem: {
        code: 'row_too_large',
        message: `The row is ${bytes.toLocaleString('en')} bytes as JSON; a request to the service carries at most ${REQUEST_BODY_LIMIT_BYTES.toLocaleString('en')}.`,
      },
    };
  }
  return { json, bytes, ...(id === undefined ? {} : { id }) };
}

function check(values: Record<string, unknown>, rules: ItemRules): RowError['error'] | undefined {
  const { table, key } = rules;
  const row = { ...values };
  if (!rules.hasId) delete row.id;
  if (key !== undefined && (row[key] === undefined || row[key] === null)) {
    return { code: 'missing_key', message: `The row has no value for the key column ${key}.` };
  }
  // An upsert may update (only the given columns) or insert (every required one): the service says which.
  const creates = key === undefined && (rules.ignoreIds || values.id === undefined);
  const problems = checkValues(table.columns, row, !creates);
  if (problems === null) return undefined;
  return {
    code: 'invalid_record',
    // One line: the table's name and its columns' are the service's (a refused row is one line of stderr).
    message: onOneLine(
      `The row does not fit table ${table.name}: ${describeProblems(problems, table.columns)}.`,
    ),
    details: problems,
  };
}
