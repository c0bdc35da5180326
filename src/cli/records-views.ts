// How records show on a terminal: a table whose columns are the records' own (id first), or one record's
// columns a line each. Under --json each record is one line as the service gave it.
import type { TableRecord } from '../contract/types.js';
import type { Column } from './output-table.js';
import type { Output } from './output.js';

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
  const width = Math.max(...names.map((name) => name.length));
  out.printLines(
    names.map((name) => {
      const value = record[name];
      const text =
        value === null || value === undefined
          ? ''
          : typeof value === 'string'
            ? value
            : JSON.stringify(value);
      return [`${name.padEnd(width)}  ${text}`];
    }),
  );
}
