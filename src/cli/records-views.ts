// How records show on a terminal: a table whose columns are the records' own (id first), or one record's
// columns a line each. Under --json each record is one line as the service gave it.
import type { TableRecord } from '../contract/types.js';
import type { Column } from './output-table.js';
import type { Output } from './output.js';
import { onOneLine, stripControlCharacters } from '../core/terminal-text.js';

/** The columns of a page of records: id, then every other key in the order first seen. */
export function recordColumns(records: readonly TableRecord[]): Array<Column<TableRecord>> {
  const names = new Set<string>();
  for (const record of records) for (const name of Object.keys(record)) if (name !== 'id') names.add(name);
  return [
    { header: 'id', value: (r) => r.id, kind: 'id' },
    ...[...names].map((name) => ({ header: name, value: (r: TableRecord) => r[name] })),
  ];
}

export function printRecord(out: Output, record: TableRecord): void {
  if (out.json) {
    out.record(record);
    return;
  }
  const names = ['id', ...Object.keys(record).filter((name) => name !== 'id')];
  const shown = names.map(onOneLine);
  const width = Math.max(...shown.map((name) => name.length));
  // A text value may be multi-line (an address, a note): its next lines stay, indented under the value, so
  // that none of them starts where a column's name does (`x\nstatus  approved` forges no column).
  const indent = ' '.repeat(width + 2);
  out.printLines(
    names.flatMap((name, i) => {
      const value = record[name];
      const text =
        value === null || value === undefined
          ? ''
          : typeof value === 'string'
            ? value
            : JSON.stringify(value);
      const [first = '', ...rest] = stripControlCharacters(text).split('\n');
      return [[`${(shown[i] ?? '').padEnd(width)}  ${first}`], ...rest.map((line) => [`${indent}${line}`])];
    }),
  );
}
