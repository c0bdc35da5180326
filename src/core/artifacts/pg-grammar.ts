// PostgreSQL's own parser (libpg-query: the server's grammar compiled to WebAssembly). It loads on the first
// SQL read only: the commands that never parse SQL never pay for it.
import type * as PgQuery from 'libpg-query';
import { withoutTierUp } from '../wasm-tier-up.js';

export type PgGrammar = Pick<typeof PgQuery, 'parseSync' | 'scanSync'>;

let loading: Promise<PgGrammar> | undefined;

export function pgGrammar(): Promise<PgGrammar> {
  loading ??= import('libpg-query').then(async (module) => {
    await module.loadModule();
    return {
      parseSync: (sql) => withoutTierUp(() => module.parseSync(sql)),
      scanSync: (sql) => withoutTierUp(() => module.scanSync(sql)),
    };
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

/**
 * Character offsets of the byte offsets of `text` in UTF-8 (the AST's and the scanner's locations count
 * bytes), computed once for the whole text: each look-up is then constant time, so reading a view costs
 * the same per token at any length (re-testing the text per token made a 30,000-line view 147 s).
 */
export function charOffsetsOf(text: string): (byteOffset: number) => number {
  if (/^[\u0000-\u007f]*$/.test(text)) return (byteOffset) => Math.max(0, Math.min(byteOffset, text.length));
  const bytes = Buffer.byteLength(text, 'utf8');
  // charAt[b]: the character (UTF-16 index) that byte b belongs to; charAt[bytes] is the end.
  const charAt = new Uint32Array(bytes + 1);
  let byte = 0;
  for (let i = 0; i < text.length;) {
    const point = text.codePointAt(i) ?? 0;
    const width = point < 0x80 ? 1 : point < 0x800 ? 2 : point < 0x10000 ? 3 : 4;
    charAt.fill(i, byte, byte + width);
    byte += width;
    i += point > 0xffff ? 2 : 1;
  }
  charAt[bytes] = text.length;
  return (byteOffset) => charAt[Math.max(0, Math.min(byteOffset, bytes))] ?? text.length;
}
