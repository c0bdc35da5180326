// PostgreSQL's own parser (libpg-query: the server's grammar compiled to WebAssembly). It loads on the first
// SQL read only: the commands that never parse SQL never pay for it.
import { setFlagsFromString } from 'node:v8';
import type * as PgQuery from 'libpg-query';

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

/**
 * Runs `read` with V8's optimising tier off for WebAssembly. A view of a few hundred lines runs the grammar's
 * parser function (100 kB of code) long enough for V8 to recompile it with TurboFan in the background: measured
 * here, 1.9 s of CPU and 600 MB of memory that the process then waits for before it exits, for a parse that
 * takes 30 ms in the baseline tier. The flag is set for the synchronous call only, so other WebAssembly in the
 * process (PGlite in the reference server) keeps tiering up.
 */
function withoutTierUp<T>(read: () => T): T {
  const toggled = setTierUpFilter(NO_FUNCTION);
  try {
    return read();
  } finally {
    if (toggled) setTierUpFilter(-1);
  }
}

/** A function index no module has: with it as the filter, no function tiers up. */
const NO_FUNCTION = 2_147_483_647;

function setTierUpFilter(index: number): boolean {
  try {
    setFlagsFromString(`--wasm-tier-up-filter=${index}`);
    return true;
  } catch {
    return false;
  }
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
