// What every part of the server talks to the database through, PGlite or PostgreSQL alike (index.ts opens one).
import { isAscii } from 'node:buffer';

export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** Runs one or more statements without parameters (migrations, DDL). */
  exec(sql: string): Promise<void>;
  /**
   * PGlite only: runs `COPY (select) TO …` (text format unless `binary`) and answers what it wrote. The rows
   * leave PostgreSQL a few kilobytes at a time, instead of one value built in PGlite's heap (which never shrinks).
   */
  copyOut?(select: string, format?: CopyFormat): Promise<Uint8Array>;
  /** PGlite only: runs `COPY table FROM …` over `data` (what copyOut answered). */
  copyIn?(table: string, data: Uint8Array): Promise<void>;
}

/** COPY's formats: `text` (tab-separated, escaped), `binary` (each value as its type's send function writes it). */
export type CopyFormat = 'text' | 'binary';

export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Every statement's deadline: statement_timeout on PostgreSQL, a worker ended and restarted on PGlite. */
  readonly queryTimeoutMs: number;
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * PGlite only: runs `fn` on a private in-memory database of the server's own (a sandbox, lent to one
   * caller at a time). PGlite has a single connection, so SQL a member wrote (gate checks) runs there,
   * over rows copied into it, and a slow check holds a sandbox instead of the service's database (see
   * gates/snapshot.ts). PostgreSQL has none: each statement has a connection of its own.
   */
  sandbox?<T>(fn: (sandbox: Db) => Promise<T>): Promise<T>;
  /**
   * PGlite only: runs gate work (gates/snapshot.ts) in the bounded queue of gate-queue.ts (a request's work
   * that cannot start in time is refused with 503 and Retry-After; `background` work waits), on a view of
   * this database whose statements give way to other requests' when both wait for the one connection.
   */
  gateWork?<T>(work: (db: Db) => Promise<T>, background?: boolean): Promise<T>;
  /**
   * PGlite only: the most rows one piece of work over a table's every row may read (a gate run, a
   * baseline); past it the work is refused (see embedded-limit.ts). PostgreSQL has none.
   */
  readonly rowLimit?: number;
  /**
   * PostgreSQL only: runs `fn` while holding a session advisory lock named `name`, so that server
   * processes sharing the database do it one at a time (start-up: migrations, seed, signing key). PGlite
   * has none: its data is one process's (see `exclusively`). `onWait` hears, once, that another process
   * holds it and this one waits.
   */
  processLock?<T>(name: string, fn: () => Promise<T>, onWait?: () => void): Promise<T>;
  /**
   * PGlite only: analyses the service's tables whose statistics are missing or stale, as PostgreSQL's
   * autovacuum does there (the database runs it every minute itself); returns the tables analysed.
   */
  analyzeStale?(): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * The rows of `select`, in its own order (`orderBy` names that order by the select list's names). On PGlite
 * they come as one JSON text, aggregated in `orderBy`'s order and parsed on the calling thread: each row's
 * fields would cost PGlite's database thread (which runs every request's statements, one at a time) their
 * decoding and their copy to the request thread, which one string does not (a page of 500 held tables:
 * 42-44 -> 28-30 ms of that thread). Then each row is an object keyed by the select list's names, jsonb
 * values parsed and timestamps as ISO text. On PostgreSQL building the JSON costs the server more than it
 * saves node (15 ms more a page of held tables), so `select` runs as it is.
 */
export async function jsonRows<T>(
  q: Queryable,
  select: string,
  orderBy: string,
  params?: unknown[],
): Promise<T[]> {
  if ((q as Partial<Db>).kind !== 'pglite') return q.query<T>(select, params);
  const [row] = await q.query<{ rows: string }>(
    `SELECT coalesce(json_agg(selected ORDER BY ${orderBy}), '[]')::text AS rows FROM (${select}) selected`,
    params,
  );
  return JSON.parse(row?.rows ?? '[]') as T[];
}

/**
 * How `copiedRows` reads a column of binary COPY back: as `jsonRows` would give it. `json`: a text column
 * holding JSON (a jsonb kept as its text when written), parsed as a `jsonb` column is, on both engines.
 */
export type CopiedColumn = 'text' | 'int4' | 'bool' | 'jsonb' | 'json' | 'timestamptz';

/**
 * The rows of `select` in `orderBy`'s order, each an object of `columns` (the select list's names, each read
 * as its type), for reads of many kilobytes a row. On PGlite they leave PostgreSQL as binary COPY, whose text
 * values are their bytes as stored: no JSON is built or escaped on the database thread (which runs every
 * request's statements, one at a time), no string is made there, and the bytes reach the calling thread
 * without a copy. The five held-tables pages of a no-change plan of 2,000 models: that thread 106 -> 73 ms
 * (docs/bench.md). COPY takes no parameters, so `params` are written into the statement as literals (text,
 * text[], integers or null: the select casts each where its type is needed). On PostgreSQL (or in a
 * transaction) `select` runs as it is, with its parameters.
 */
export async function copiedRows<T>(
  q: Queryable,
  select: string,
  orderBy: string,
  params: Array<string | string[] | number | null>,
  columns: Record<string & keyof T, CopiedColumn>,
): Promise<T[]> {
  const names = Object.keys(columns) as Array<string & keyof T>;
  if ((q as Partial<Db>).kind !== 'pglite' || q.copyOut === undefined) {
    const rows = await q.query<T>(select, params);
    const json = names.filter((name) => columns[name] === 'json');
    if (json.length > 0)
      for (const row of rows as Array<Record<string, unknown>>)
        for (const name of json) {
          const value = row[name];
          if (typeof value === 'string') row[name] = JSON.parse(value);
        }
    return rows;
  }
  const inlined = select.replace(/\$(\d+)/g, (_, at: string) => sqlLiteral(params[Number(at) - 1]));
  const bytes = await q.copyOut(
    `SELECT ${names.map((name) => `selected."${name}"`).join(', ')} FROM (${inlined}) selected ORDER BY ${orderBy}`,
    'binary',
  );
  return readBinaryCopy<T>(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), names, columns);
}

/** `value` as an SQL literal (standard_conforming_strings: a quote doubled is the only escape). */
function sqlLiteral(value: string | string[] | number | null | undefined): string {
  if (value === null) return 'NULL';
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error(`not an integer parameter: ${value}`);
    return String(value);
  }
  if (Array.isArray(value)) return `ARRAY[${value.map(sqlLiteral).join(',')}]::text[]`;
  if (typeof value !== 'string') throw new Error('a parameter of copiedRows is missing');
  if (value.includes('\0')) throw new Error('a text parameter holds a NUL character');
  return `'${value.replaceAll("'", "''")}'`;
}

/** PostgreSQL's epoch (2000-01-01) in Unix milliseconds. */
const POSTGRES_EPOCH_MS = 946_684_800_000;
/** Binary COPY's header: signature (11 bytes), flags (4), then an extension of the length that follows (4). */
const COPY_SIGNATURE_BYTES = 11;

function readBinaryCopy<T>(
  bytes: Buffer,
  names: Array<string & keyof T>,
  columns: Record<string & keyof T, CopiedColumn>,
): T[] {
  const kinds = names.map((name) => columns[name]);
  // Bytes that are all ASCII are one string, each text a slice of it (a page of held tables: 40,000 texts);
  // else each text is decoded from its bytes.
  const ascii = isAscii(bytes) ? bytes.toString('latin1') : undefined;
  const text = (start: number, end: number) =>
    ascii === undefined ? bytes.toString('utf8', start, end) : ascii.slice(start, end);
  let at = COPY_SIGNATURE_BYTES + 4;
  at += 4 + bytes.readInt32BE(at);
  const rows: T[] = [];
  for (;;) {
    const count = bytes.readInt16BE(at);
    at += 2;
    if (count === -1) return rows;
    if (count !== names.length)
      throw new Error(`binary COPY row of ${count} values, ${names.length} expected`);
    const row: Record<string, unknown> = {};
    for (let i = 0; i < count; i += 1) {
      const length = bytes.readInt32BE(at);
      at += 4;
      row[names[i] as string] = length === -1 ? null : binaryValue(bytes, text, at, at + length, kinds[i]);
      if (length > 0) at += length;
    }
    rows.push(row as T);
  }
}

function binaryValue(
  bytes: Buffer,
  text: (start: number, end: number) => string,
  start: number,
  end: number,
  kind: CopiedColumn | undefined,
): unknown {
  switch (kind) {
    case 'text':
      return text(start, end);
    case 'int4':
      return bytes.readInt32BE(start);
    case 'bool':
      return bytes[start] === 1;
    case 'jsonb':
      // jsonb's binary form: a version byte (1), then its text.
      return JSON.parse(text(start + 1, end));
    case 'json':
      return JSON.parse(text(start, end));
    case 'timestamptz': {
      // Microseconds since PostgreSQL's epoch, to the millisecond below (as Date reads its text).
      const micros = bytes.readBigInt64BE(start);
      const ms = Number(micros / 1000n) - (micros % 1000n < 0n ? 1 : 0);
      return new Date(ms + POSTGRES_EPOCH_MS).toISOString();
    }
    default:
      throw new Error(`no reader for a column of kind ${String(kind)}`);
  }
}
