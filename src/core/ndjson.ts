// The one way gds writes a JSON value as an NDJSON line (stdout records, stderr errors, export files).
/** JSON on one line, lossless: C1, DEL, U+2028 and U+2029, and the format characters terminal-text.ts strips
 *  from human output (bidi overrides and isolates, zero width spaces, BOMs, tags; not the joiners) are
 *  escaped (JSON already escapes C0), not stripped, so no raw control character reaches a terminal and
 *  nothing reorders or hides the rest of the line. A character outside the BMP is escaped as its pair. */
export function ndjsonLine(value: object): string {
  return escapedJson(JSON.stringify(value));
}

/** JSON text (JSON.stringify's, jq's) with the characters ndjsonLine escapes written as `\u` escapes: they
 *  stand only inside strings, so it stays the same JSON, whole, and no terminal acts on it. */
export function escapedJson(json: string): string {
  return json.replace(/[\u007f-\u009f\u2028\u2029]|(?![\u200c\u200d])\p{Cf}/gu, (c) => {
    let escaped = '';
    for (let i = 0; i < c.length; i += 1) escaped += `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`;
    return escaped;
  });
}
