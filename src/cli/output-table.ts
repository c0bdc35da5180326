// The rows of a list as gh prints them: on a terminal a table whose columns are fitted to the width (the
// layout is table.ts's, its text-width libraries loaded only for a terminal), piped tab-separated fields with no header, nothing cut.
import { styleText } from 'node:util';
import { onOneLine, stripControlCharacters } from '../core/terminal-text.js';
import { relativeTime } from './relative-time.js';
import type { Style } from './segment.js';
import { tableLayout } from './table.js';

/**
 * What a column holds, which says how it shows on a terminal (the rules are docs/output.md's): free text
 * (`text`, the default: details, notes; `name`, what names the row; `who`, the person who did it; `what`,
 * what happened or why) is cut with … when the row does not fit; `id`, `version`, `time` and `state` are
 * never cut. A column that still cannot fit is dropped, the one of least value first: a column empty in
 * every row, then text, times, versions, states, `what`, `who`, `name`, and ids last. `time` reads `3m ago`
 * and `state` is coloured. Piped and under --json nothing changes: ISO times, nothing cut, no colour.
 */
export type ColumnKind = 'id' | 'name' | 'who' | 'what' | 'version' | 'time' | 'state' | 'text';

export interface Column<Row> {
  header: string;
  value: (row: Row) => unknown;
  kind?: ColumnKind;
  /** Which column goes first when a row cannot fit: the lowest (default by kind; ids highest). */
  rank?: number;
}

export interface TableOptions {
  /** Said on stderr (stdout stays empty) when there are no rows, e.g. "No tables." */
  empty?: string;
  /** `-L/--limit`: only the first this many rows (`Showing N of M` on a terminal when it cuts). */
  limit?: number;
  /** What the rows are, for `Showing 2 of 9 tables`. */
  noun?: string;
  /** How many rows the whole list holds, when the service paged it and said (else the rows given). */
  total?: number;
}

const kindValue: Record<ColumnKind, number> = {
  id: 100,
  name: 90,
  who: 85,
  what: 82,
  state: 80,
  version: 60,
  time: 40,
  text: 20,
};
const shrinkingKinds: ReadonlySet<ColumnKind> = new Set(['text', 'name', 'who', 'what']);

/** Green, red or yellow: how a lifecycle state, a job status or a check result reads at a glance. */
export function stateStyle(value: string): Style | undefined {
  const word = value.toUpperCase();
  if (/^(CERTIFIED|PASS|PASSED|SUCCEEDED|ACTIVE|OK|CONNECTED|YES)$/.test(word)) return 'green';
  if (/^(QUARANTINED|FAIL|FAILED|REJECTED|ERROR|CANCELLED|REVOKED|DEPRECATED)$/.test(word)) return 'red';
  if (/^(PENDING_REVIEW|WARN|QUEUED|RUNNING|PENDING|DRAFT|OPEN|SKIPPED)$/.test(word)) return 'yellow';
  return undefined;
}

/** Piped: a row as tab-separated fields, nothing cut (gh's rules). */
export function pipedLine<Row extends object>(row: Row, columns: ReadonlyArray<Column<Row>>): string {
  return `${columns.map((c) => oneLine(cellText(c.value(row)))).join('\t')}\n`;
}

/**
 * A terminal table whose columns are fitted to `sample` (table.ts), `width` wide: its header, and the lines
 * of any rows, the sample's or later ones, in the same columns.
 */
export async function terminalTable<Row extends object>(
  sample: readonly Row[],
  columns: ReadonlyArray<Column<Row>>,
  width: number,
  colour: boolean,
): Promise<{ header: string; lines(rows: readonly Row[]): string }> {
  const cells = (rows: readonly Row[]) =>
    rows.map((row) =>
      columns.map((c) => {
        const text = oneLine(cellText(c.value(row)));
        if (c.kind === 'time') return relativeTime(text);
        const style = c.kind === 'state' && colour ? stateStyle(text) : undefined;
        return style === undefined ? text : styleText(style, text, { validateStream: false });
      }),
    );
  const headers = columns.map((c) => stripControlCharacters(c.header).toUpperCase());
  const fits = columns.map((c) => ({
    shrinks: shrinkingKinds.has(c.kind ?? 'text'),
    value: c.rank ?? kindValue[c.kind ?? 'text'],
    cutLast: c.kind === 'name' || c.kind === 'who' || c.kind === 'what',
  }));
  const layout = await tableLayout(headers, cells(sample), width, fits);
  return {
    header: layout.header,
    lines: (rows) =>
      cells(rows)
        .map((row) => `${layout.render(row)}\n`)
        .join(''),
  };
}

/** A tab inside a cell would split its column: it becomes a space, as a line break does (cellText). */
function oneLine(cell: string): string {
  return cell.replace(/\t+/g, ' ');
}

function cellText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return onOneLine(typeof value === 'object' ? JSON.stringify(value) : String(value));
}
