// PostgreSQL's own parser (libpg-query: the server's grammar compiled to WebAssembly). It loads on the first
// SQL read only: the commands that never parse SQL never pay for it.
import type * as PgQuery from 'libpg-query';

export type PgGrammar = Pick<typeof PgQuery, 'parseSync' | 'scanSync'>;

let loading: Promise<PgGrammar> | undefined;

export function pgGrammar(): Promise<PgGrammar> {
  loading ??= import('libpg-query').then(async (module) => {
    await module.loadModule();
    return module;
  });
  return loading;
}

/** What PostgreSQL says about text it refuses: its own message and the 0-based character offset it points at. */
export function pgRefusal(err: unknown): { message: string; offset?: number } {
  const details = (err as { sqlDetails?: { message?: unknown; cursorPosition?: unknown } }).sqlDetails;
  const raw = typeof details?.message === 'string' ? details.message : String((err as Error).message);
  // An unterminated quote makes "at or near" quote the rest of the file: its first line says enough.
  const message = raw.replace(/ at or near "([\s\S]*)"$/, (whole, near: string) => {
    const line = near.split('\n')[0] ?? '';
    return line === near && near.length <= 40 ? whole : ` at or near "${line.slice(0, 40)}…"`;
  });
  const offset = details?.cursorPosition;
  return typeof offset === 'number' && offset >= 0 ? { message, offset } : { message };
}

/** Character offset of a byte offset of `text` in UTF-8 (the AST's locations count bytes). */
export function byteToCharOffset(text: string, byteOffset: number): number {
  if (/^[\u0000-\u007f]*$/.test(text)) return byteOffset;
  const bytes = Buffer.from(text, 'utf8').subarray(0, byteOffset);
  return bytes.toString('utf8').length;
}
