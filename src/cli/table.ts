// A table on a terminal, by gh's rules: a header, columns aligned with two spaces between them and no
// borders. Each column says how it shrinks (Column.kind in output-table.ts): free text is cut with … first,
// widest first; ids, versions, times and states are never cut. When the row still does not fit, the
// column of least value is dropped (the id last) before anything whole is cut. (Piped, Output.table
// writes tab-separated rows itself.) Widths are measured with string-width (wide CJK characters and emoji
// count as two cells, colour codes none) and cells are cut with cli-truncate.
import { onFirstUse } from '../core/on-first-use.js';

// cli-truncate and string-width: 40 ms of CPU and 10 MiB to load, paid only by a table on a terminal.
const textCells = onFirstUse(async () => {
  const [{ default: cliTruncate }, { default: stringWidth }] = await Promise.all([
    import('cli-truncate'),
    import('string-width'),
  ]);
  return { cliTruncate, stringWidth };
});

const gap = '  ';
/** The value of a state column (output-table.ts): columns below it, unless cutLast, are dropped before who/what text is cut. */
const stateValue = 80;
/** A free-text column is never cut narrower than this (room for a few characters and the ellipsis). */
const minimumWidth = 8;

export interface ColumnFit {
  /** Free text shrinks; anything else (ids, versions, times, states) is shown whole or not at all. */
  shrinks: boolean;
  /** Which column goes first when the row cannot fit: the lowest value. */
  value: number;
  /**
   * Free text that says who or what (a row's name, the person who acted, a cause): cut only once no column
   * that is neither an id, a state nor such text is left to drop; plain text is cut before anything goes.
   */
  cutLast?: boolean;
}

/**
 * The header and the rows, aligned, fitted to `width` columns; cells hold no tab or line break. Returns
 * the header line, the row lines (without colour added; the caller styles the header) and the indexes
 * of the columns shown.
 */
export async function alignedRows(
  headers: readonly string[],
  cells: ReadonlyArray<readonly string[]>,
  width: number,
  fits: readonly ColumnFit[] = headers.map(() => ({ shrinks: true, value: 0 })),
): Promise<{ header: string; rows: string[]; shown: number[] }> {
  const layout = await tableLayout(headers, cells, width, fits);
  return { header: layout.header, rows: cells.map(layout.render), shown: layout.shown };
}

export interface TableLayout {
  /** The header line (the caller styles it). */
  header: string;
  /** One row in the layout's columns: free text wider than its column is cut, anything else shown whole. */
  render(row: readonly string[]): string;
  /** The indexes of the columns shown. */
  shown: number[];
}

/**
 * The columns' widths and which columns show, fitted to `width` from the header and `cells`, for these rows
 * and any that come later (a list printed page by page takes its widths from the first page). A later cell
 * wider than its column is cut when it is free text; an id, a version, a time or a state is shown whole and
 * the rest of its row moves over.
 */
export async function tableLayout(
  headers: readonly string[],
  cells: ReadonlyArray<readonly string[]>,
  width: number,
  given: readonly ColumnFit[] = headers.map(() => ({ shrinks: true, value: 0 })),
): Promise<TableLayout> {
  const { cliTruncate, stringWidth } = await textCells();
  const natural = headers.map((header, i) =>
    cells.reduce((widest, row) => Math.max(widest, stringWidth(row[i] ?? '')), stringWidth(header)),
  );
  // A column with nothing in any row says nothing: when the row does not fit, it goes before anything is cut.
  const empty = (i: number) => cells.length > 0 && cells.every((row) => (row[i] ?? '') === '');
  const fits = given.map((fit, i) => (empty(i) ? { shrinks: fit.shrinks, value: -1 } : fit));
  const minor = (i: number) => !(fits[i]?.cutLast ?? false) && (fits[i]?.value ?? 0) < stateValue;
  const wanted = (columns: readonly number[]) =>
    columns.reduce((sum, i) => sum + (natural[i] ?? 0), gap.length * (columns.length - 1));
  let shown = headers.map((_, i) => i);
  while (wanted(shown) > width && shown.some(empty)) {
    const dropped = shown.findLast(empty);
    shown = shown.filter((i) => i !== dropped);
  }
  let widths: number[] | undefined;
  for (;;) {
    // Plain text is cut first; who/what text only once no minor column is left to drop instead.
    widths = fitWidths(shown, natural, fits, width, (i) => !(fits[i]?.cutLast ?? false));
    if (widths !== undefined || shown.length <= 1) break;
    if (!shown.some(minor)) {
      widths = fitWidths(shown, natural, fits, width, () => true);
      if (widths !== undefined) break;
    }
    const dropped = leastValued(shown, fits);
    shown = shown.filter((i) => i !== dropped);
  }
  // One column left that is still too wide: it is cut, whatever it holds.
  const final = widths ?? shown.map(() => Math.max(1, width));
  const cuts = (column: number) => widths === undefined || (fits[column]?.shrinks ?? true);
  const render = (row: readonly string[]) =>
    shown
      .map((column, k) => {
        const cell = row[column] ?? '';
        const columnWidth = final[k] ?? 0;
        const text = cuts(column) && stringWidth(cell) > columnWidth ? cliTruncate(cell, columnWidth) : cell;
        return k === shown.length - 1
          ? text
          : text + ' '.repeat(Math.max(0, columnWidth - stringWidth(text)));
      })
      .join(gap)
      .trimEnd();
  return { header: render(headers), render, shown };
}

/** The column to drop: lowest value; between equals, the rightmost. */
function leastValued(shown: readonly number[], fits: readonly ColumnFit[]): number {
  let least = shown[shown.length - 1] ?? 0;
  for (const i of shown.toReversed()) {
    if ((fits[i]?.value ?? 0) < (fits[least]?.value ?? 0)) least = i;
  }
  return least;
}

/**
 * The width of each shown column: its natural width when everything fits; otherwise the widest free-text
 * column loses a cell at a time (so the widest ones end up equal) down to the minimum. Undefined when the
 * columns that do not shrink leave no room.
 */
function fitWidths(
  shown: readonly number[],
  natural: readonly number[],
  fits: readonly ColumnFit[],
  width: number,
  mayCut: (column: number) => boolean,
): number[] | undefined {
  const available = Math.max(width, 1) - gap.length * (shown.length - 1);
  const widths = shown.map((i) => natural[i] ?? 0);
  let excess = widths.reduce((sum, w) => sum + w, 0) - available;
  while (excess > 0) {
    let widest = -1;
    widths.forEach((w, k) => {
      const column = shown[k] ?? 0;
      const shrinks = (fits[column]?.shrinks ?? true) && mayCut(column);
      if (shrinks && w > minimumWidth && (widest === -1 || w > (widths[widest] ?? 0))) widest = k;
    });
    if (widest === -1) return undefined;
    widths[widest] = (widths[widest] ?? 0) - 1;
    excess -= 1;
  }
  return widths;
}

export { relativeTime } from './relative-time.js';
