// A table on a terminal, by gh's rules: a header, columns aligned with two spaces between them and no
// borders, and, when the rows are wider than the terminal, the widest columns cut with … until they fit.
// (Piped, Output.table writes tab-separated rows itself.) Widths are measured with string-width (wide CJK
// characters and emoji count as two cells) and cells are cut with cli-truncate: this module loads only
// when a table is printed on a terminal.
import cliTruncate from 'cli-truncate';
import stringWidth from 'string-width';

const gap = '  ';
/** A column is never cut narrower than this (room for a few characters and the ellipsis). */
const minimumWidth = 5;

/**
 * The header and the rows, aligned, fitted to `width` columns; cells hold no tab or line break. Returns
 * the header line and the row lines, without colour (the caller styles the header).
 */
export function alignedRows(
  headers: readonly string[],
  cells: ReadonlyArray<readonly string[]>,
  width: number,
): { header: string; rows: string[] } {
  const lines = [headers, ...cells];
  const natural = headers.map((_, i) => Math.max(...lines.map((row) => stringWidth(row[i] ?? ''))));
  const widths = fitWidths(natural, Math.max(width, 1) - gap.length * (headers.length - 1));
  const render = (row: readonly string[]) =>
    row
      .map((cell, i) => {
        const columnWidth = widths[i] ?? 0;
        const text = stringWidth(cell) > columnWidth ? cliTruncate(cell, columnWidth) : cell;
        return i === row.length - 1 ? text : text + ' '.repeat(Math.max(0, columnWidth - stringWidth(text)));
      })
      .join(gap)
      .trimEnd();
  const [header = [], ...rows] = lines;
  return { header: render(header), rows: rows.map(render) };
}

/**
 * The width of each column: its natural width when everything fits; otherwise the widest column loses a
 * cell at a time (so the widest ones end up equal) until the row fits or every column is at its minimum.
 */
function fitWidths(natural: readonly number[], available: number): number[] {
  const widths = [...natural];
  let excess = widths.reduce((sum, w) => sum + w, 0) - available;
  while (excess > 0) {
    const widest = widths.indexOf(Math.max(...widths));
    if ((widths[widest] ?? 0) <= minimumWidth) break;
    widths[widest] = (widths[widest] ?? 0) - 1;
    excess -= 1;
  }
  return widths;
}
