// dbt seeds are CSV files (RFC 4180: quoted fields, "" for a quote, line breaks inside quotes). Pure.

/** The rows of a CSV text, each a list of fields; a blank line is no row. */
export function parseCsv(text: string, delimiter = ',', maxRows = Infinity): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let touched = false;
  const endRow = () => {
    if (touched || row.length > 0) {
      row.push(field);
      rows.push(row);
    }
    row = [];
    field = '';
    touched = false;
  };
  const source = text.startsWith('\uFEFF') ? text.slice(1) : text;
  for (let i = 0; i < source.length && rows.length < maxRows; i++) {
    const c = source[i];
    if (quoted) {
      if (c === '"' && source[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') {
      quoted = true;
      touched = true;
    } else if (c === delimiter) {
      row.push(field);
      field = '';
      touched = true;
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && source[i + 1] === '\n') i++;
      endRow();
    } else {
      field += c;
      touched = true;
    }
  }
  if (rows.length < maxRows) endRow();
  return rows;
}

/** The column names of a CSV file: its first line. */
export function csvHeader(text: string, delimiter = ','): string[] {
  return (parseCsv(text, delimiter, 1)[0] ?? []).map((name) => name.trim());
}
