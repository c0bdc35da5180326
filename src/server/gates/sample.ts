// `gate run --sample`: which rows a Gate 1 dry run reads. Rows are numbered 1..total in the table's
// natural order (see relation.ts); a sample keeps:
//   head:N      rows 1..N (the first N);
//   tail:N      rows total-N+1..total (the last N);
//               on a table (or materialized view) whose grain key no unique index orders, the first and
//               the last N in storage order instead: the lowest keys would cost a pass over every row;
//   random:N    N rows drawn uniformly without replacement: the N lowest md5(seed || row number),
//               with a seed drawn per run and returned in the proof, so every check of one run
//               reads the same rows (and a run can be told apart from another);
//   chunks:K@N  K runs of N consecutive rows, their starts spread evenly from the first row to
//               total-N+1 (chunk i of K starts at 1 + floor(i * (total - N) / (K - 1)); K = 1 is
//               head:N); chunks overlap, and are read once, when K * N > total. On a table (or
//               materialized view) where the runs are a small share of the rows, the runs are in
//               storage order and their starts spread evenly over the table's blocks instead (the
//               first run from the first row, the last to the last row): see drawBlockChunks.
import { randomBytes } from 'node:crypto';
import { MAX_CHUNKS, MAX_SAMPLE_ROWS } from '../../core/gate-sample.js';
import type { Queryable } from '../db/handle.js';
import { badRequest } from '../errors.js';
import { Params } from './params.js';

/** The rows of a relation as a sample draws from them (`b` is the alias of `from`). */
export interface RowsSource {
  from: string;
  present: string[];
  /** ORDER BY terms of the natural order, ascending. */
  order: string[];
  /** A plain scan of `from` yields the natural order (a table in storage order): no sort needed. */
  storageOrdered: boolean;
  /** The natural order is a unique btree index's (the grain key): ORDER BY … LIMIT N reads N entries. */
  keyIndexed?: boolean;
  /** The relation itself, when TABLESAMPLE applies (a table or materialized view). */
  sampleable?: string;
  /** A text that tells one row from another, hashed with the seed for random:N. */
  identity: string;
}

export type SampleSpec =
  | { kind: 'head' | 'tail' | 'random'; rows: number; spec: string }
  | { kind: 'chunks'; chunks: number; rows: number; spec: string };

const SHAPE = /^(?:(head|tail|random):(\d{1,7})|chunks:(\d{1,4})@(\d{1,7}))$/;

export function parseSample(spec: string): SampleSpec {
  const match = SHAPE.exec(spec.trim());
  const usage = `Use head:N, tail:N, random:N or chunks:K@N with N from 1 to ${MAX_SAMPLE_ROWS} and K from 1 to ${MAX_CHUNKS} (e.g. chunks:4@100).`;
  if (!match) throw badRequest('invalid_sample', `"${spec}" is not a sample. ${usage}`, { sample: spec });
  const [, kind, n, k, chunkRows] = match;
  const rows = Number(n ?? chunkRows);
  const chunks = k === undefined ? 1 : Number(k);
  if (rows < 1 || rows > MAX_SAMPLE_ROWS || chunks < 1 || chunks > MAX_CHUNKS) {
    throw badRequest('invalid_sample', `"${spec}" is out of range. ${usage}`, { sample: spec });
  }
  const normalized = spec.trim();
  return kind
    ? { kind: kind as 'head' | 'tail' | 'random', rows, spec: normalized }
    : { kind: 'chunks', chunks, rows, spec: normalized };
}

/** A fresh seed for a random sample. */
export function newSampleSeed(): string {
  return randomBytes(8).toString('hex');
}

const quoteName = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** `b.x DESC, …`: the natural order reversed. */
const descending = (order: string[]) => order.map((term) => `${term} DESC`).join(', ');

/**
 * Draws one run's sample into `target` (a temporary table, dropped with the transaction): one statement
 * over the relation, so no check numbers or sorts the rows again. Returns how it was drawn (the cost):
 *   head:N     a grain key that a unique btree index orders: its N lowest, read through the index; else on a
 *              table (or materialized view) the first N in storage order by LIMIT (no sort); else (a
 *              view, the service rows) the N lowest by the natural order in one pass keeping N rows;
 *   tail:N     as head:N from the other end: backwards through the index; on a table the last N in
 *              storage order by a TID range scan of its last blocks (drawTailBlocks); else one pass
 *              keeping N rows;
 *   random:N   a table: TABLESAMPLE BERNOULLI of about 3N rows (seeded, REPEATABLE), then the N lowest
 *              md5(seed || ctid) among them, read again in full only if the draw came out short; a view
 *              (no TABLESAMPLE) or the service rows: the N lowest md5(seed || row) in one pass keeping
 *              N rows. Never a sort of the table;
 *   chunks:K@N a table with room for the runs: TID range scans of the blocks each run spans (no count,
 *              no numbering, no sort); else one count, then rows numbered once: in storage order for a
 *              table (no sort), else by the natural order (one sort of every row, said in the method).
 */
export async function drawSample(
  tx: Queryable,
  target: string,
  build: (params: Params) => RowsSource,
  sample: SampleSpec,
  seed: string,
): Promise<string> {
  /** Runs one statement over the rows, with bind parameters of its own. */
  const over = async <T>(sql: (rows: RowsSource, add: Params['add'], columns: string) => string) => {
    const params = new Params();
    const rows = build(params);
    const columns = rows.present.map((c) => `b.${quoteName(c)}`).join(', ') || 'NULL AS __gds_none';
    return tx.query<T>(sql(rows, params.add, columns), params.values);
  };
  const create = async (select: (rows: RowsSource, add: Params['add'], columns: string) => string) => {
    await tx.query(`DROP TABLE IF EXISTS ${target}`);
    await over(
      (rows, add, columns) =>
        `CREATE TEMP TABLE ${target.replace(/^pg_temp\./, '')} ON COMMIT DROP AS ${select(rows, add, columns)}`,
    );
  };
  const shape = build(new Params());
  const n = (add: Params['add']) => `${add(sample.rows)}::bigint`;
  const byOrder = (rows: RowsSource) => rows.order.join(', ') || 'true';
  switch (sample.kind) {
    case 'head':
      if (shape.keyIndexed !== true && shape.sampleable !== undefined) {
        await create((rows, add, columns) => `SELECT ${columns} FROM ${rows.from} LIMIT ${n(add)}`);
        return shape.storageOrdered
          ? 'the first rows in storage order (LIMIT; no sort)'
          : 'the first rows in storage order (LIMIT; no sort): no unique index orders the grain key, and the lowest keys would cost a pass over every row';
      }
      await create(
        (rows, add, columns) =>
          `SELECT ${columns} FROM ${rows.from} ORDER BY ${byOrder(rows)} LIMIT ${n(add)}`,
      );
      return shape.keyIndexed
        ? 'the lowest rows by the grain key, read through its unique index (ORDER BY … LIMIT: N entries)'
        : 'the lowest rows by the natural order (ORDER BY … LIMIT: one pass keeping N rows)';
    case 'tail':
      if (shape.keyIndexed !== true && shape.sampleable !== undefined) {
        const method = await drawTailBlocks(tx, target, shape.sampleable, sample.rows, create);
        if (method !== null) return method;
      }
      await create(
        (rows, add, columns) =>
          `SELECT ${columns} FROM ${rows.from} ORDER BY ${descending(rows.order) || 'true'} LIMIT ${n(add)}`,
      );
      return shape.keyIndexed
        ? 'the highest rows by the grain key, read backwards through its unique index (ORDER BY … DESC LIMIT: N entries)'
        : 'the highest rows by the natural order (ORDER BY … DESC LIMIT: one pass keeping N rows)';
    case 'random':
      return drawRandom(tx, target, shape, sample.rows, seed, create);
    case 'chunks': {
      if (shape.sampleable !== undefined) {
        const method = await drawBlockChunks(tx, target, shape.sampleable, sample, create);
        if (method !== null) return method;
      }
      const [counted] = await over<{ n: string }>((rows) => `SELECT count(*)::text AS n FROM ${rows.from}`);
      const total = Number(counted?.n ?? 0);
      const k = sample.chunks;
      const size = sample.rows;
      // Chunk i starts at 1 + floor(i * (total - N) / (K - 1)); the rows needed end at the last chunk's end.
      const starts = Array.from({ length: k }, (_, i) =>
        k === 1 ? 1 : 1 + Math.floor((i * Math.max(total - size, 0)) / (k - 1)),
      );
      const last = Math.min(total, (starts.at(-1) ?? 1) + size - 1);
      await create((rows, add, columns) => {
        const numbered = rows.storageOrdered
          ? `SELECT ${columns}, row_number() OVER () AS __gds_ord FROM (SELECT * FROM ${rows.from} LIMIT ${add(last)}::bigint) AS b`
          : `SELECT ${columns}, row_number() OVER (ORDER BY ${byOrder(rows)}) AS __gds_ord FROM ${rows.from}`;
        return `SELECT ${rows.present.map(quoteName).join(', ') || '__gds_none'} FROM (${numbered}) AS numbered
                 WHERE __gds_ord IN (SELECT s.start + o.j FROM unnest(${add(starts)}::bigint[]) AS s(start),
                                                            generate_series(0, ${n(add)} - 1) AS o(j))`;
      });
      return shape.storageOrdered
        ? 'rows counted, then numbered once in storage order up to the last chunk (no sort)'
        : 'rows counted, then numbered once by the natural order: one sort of every row (a view, a grain key or the service rows)';
    }
  }
}

type Create = (select: (rows: RowsSource, add: Params['add'], columns: string) => string) => Promise<void>;

/** Blocks read to learn how many rows a block holds (a table need not have been analyzed). */
const PROBE_BLOCKS = 16;

/**
 * The blocks up to the one holding the last row: a table may end in empty pages (PostgreSQL 16 and later
 * extend a table by many pages at once). Read backwards from the end, PROBE_BLOCKS, then twice as many…
 */
async function usedBlocks(tx: Queryable, table: string, blocks: number): Promise<number> {
  for (let back = PROBE_BLOCKS; blocks > 0; back *= 2) {
    const from = Math.max(blocks - back, 0);
    const [row] = await tx.query<{ block: string | null }>(
      `SELECT max((b.ctid::text::point)[0])::text AS block FROM ${table} AS b WHERE b.ctid >= $1::tid`,
      [`(${from},0)`],
    );
    if (row?.block != null) return Number(row.block) + 1;
    if (from === 0) return 0;
  }
  return 0;
}

/**
 * How many blocks a table uses up to its last row, and how many rows a block holds (from its first blocks);
 * null for an empty table.
 */
async function blockDensity(
  tx: Queryable,
  table: string,
): Promise<{ blocks: number; perBlock: number } | null> {
  const [size] = await tx.query<{ blocks: string }>(
    `SELECT (pg_relation_size($1::regclass) / current_setting('block_size')::bigint)::text AS blocks`,
    [table],
  );
  const blocks = await usedBlocks(tx, table, Number(size?.blocks ?? 0));
  const probe = Math.min(blocks, PROBE_BLOCKS);
  if (probe === 0) return null;
  const [probed] = await tx.query<{ n: string }>(
    `SELECT count(*)::text AS n FROM ${table} AS b WHERE b.ctid < $1::tid`,
    [`(${probe},0)`],
  );
  const perBlock = Number(probed?.n ?? 0) / probe;
  return perBlock > 0 ? { blocks, perBlock } : null;
}

/**
 * tail:N on a table (or materialized view) whose grain key no unique index orders: the last N rows in
 * storage order, read by a TID range scan of the last blocks (twice what N rows fill, then four times as
 * many while it comes out short), sorted among themselves only. Null for an empty table.
 */
async function drawTailBlocks(
  tx: Queryable,
  target: string,
  table: string,
  n: number,
  create: Create,
): Promise<string | null> {
  const density = await blockDensity(tx, table);
  if (density === null) return null;
  const { blocks, perBlock } = density;
  for (let span = Math.ceil((2 * n) / perBlock) + 2; ; span *= 4) {
    const first = Math.max(blocks - span, 0);
    await create(
      (_rows, add, columns) =>
        `SELECT ${columns} FROM ${table} AS b WHERE b.ctid >= ${add(`(${first},0)`)}::tid
          ORDER BY b.ctid DESC LIMIT ${add(n)}::bigint`,
    );
    const [drawn] = await tx.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${target}`);
    if (Number(drawn?.n ?? 0) >= n || first === 0) {
      return 'the last rows in storage order (a TID range scan of the last blocks; no sort of the table)';
    }
  }
}

/**
 * chunks:K@N on a table (or materialized view) with room for them: K runs of N consecutive rows in storage
 * order, the runs' first blocks spread evenly over the table's blocks (the first run starts at the first
 * row, the last ends at the last row). Each run is read by a TID range scan of the few blocks it spans:
 * no count of the rows, no numbering, no sort of the table; the cost is K * N rows, not the table.
 * Null when the runs would cover a large share of the table, or came out short (pages mostly empty):
 * the caller then numbers the rows.
 */
async function drawBlockChunks(
  tx: Queryable,
  target: string,
  table: string,
  sample: { chunks: number; rows: number },
  create: Create,
): Promise<string | null> {
  const { chunks: k, rows: n } = sample;
  const density = await blockDensity(tx, table);
  if (density === null) return null;
  const { blocks, perBlock } = density;
  if (4 * k * n > perBlock * blocks) return null;
  // The blocks one run may span: twice what N rows fill at the first blocks' density, and two more.
  const span = Math.ceil((2 * n) / perBlock) + 2;
  if (k * (span + 1) > blocks) return null;
  const step = k === 1 ? 0 : (blocks - span) / (k - 1);
  await create((rows, add, columns) =>
    Array.from({ length: k }, (_, i) => {
      const first = Math.floor(i * step);
      const last = i === k - 1 && k > 1;
      // The last run is the N rows before the end: read backwards from past the last block.
      const end = last ? '(4294967294,0)' : `(${first + span},0)`;
      return `(SELECT ${columns} FROM ${table} AS b
                WHERE b.ctid >= ${add(`(${first},0)`)}::tid AND b.ctid < ${add(end)}::tid
                ORDER BY b.ctid${last ? ' DESC' : ''} LIMIT ${add(n)}::bigint)`;
    }).join(' UNION ALL '),
  );
  const [drawn] = await tx.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${target}`);
  if (Number(drawn?.n ?? 0) < k * n) return null;
  return 'K runs of N consecutive rows in storage order, their first blocks spread evenly over the table (TID range scans of the blocks each run spans: no count, no numbering, no sort)';
}

async function drawRandom(
  tx: Queryable,
  target: string,
  shape: RowsSource,
  wanted: number,
  seed: string,
  create: Create,
): Promise<string> {
  const n = (add: Params['add']) => `${add(wanted)}::bigint`;
  const hash = (rows: RowsSource, add: Params['add']) => `md5(${add(seed)}::text || ${rows.identity})`;
  const everyRow = () =>
    create(
      (rows, add, columns) =>
        `SELECT ${columns} FROM ${rows.from} ORDER BY ${hash(rows, add)} LIMIT ${n(add)}`,
    );
  const table = shape.sampleable;
  if (table === undefined) {
    await everyRow();
    return 'a seeded hash of every row, keeping the N lowest (one pass, no sort; no TABLESAMPLE on a view or the service rows)';
  }
  // The planner's row estimate; a table never analyzed (e.g. a fresh copy) is counted instead.
  const [estimate] = await tx.query<{ rows: number }>(
    `SELECT reltuples::float8 AS rows FROM pg_catalog.pg_class WHERE oid = $1::regclass`,
    [table],
  );
  const [counted] =
    estimate && estimate.rows > 0
      ? [estimate]
      : await tx.query<{ rows: number }>(`SELECT count(*)::float8 AS rows FROM ${table}`);
  const percent = (100 * (3 * wanted + 100)) / Math.max(counted?.rows ?? 0, 1);
  if (percent >= 50) {
    await everyRow();
    return 'a seeded hash of every row, keeping the N lowest (one pass, no sort; N is a large share of the table)';
  }
  const repeatable = Number.parseInt(seed.slice(0, 8) || '0', 16);
  await create(
    (rows, add, columns) =>
      `SELECT ${columns} FROM ${table} AS b TABLESAMPLE BERNOULLI (${add(percent)}::float8)
         REPEATABLE (${add(repeatable)}::float8) ORDER BY ${hash(rows, add)} LIMIT ${n(add)}`,
  );
  const [drawn] = await tx.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${target}`);
  if (Number(drawn?.n ?? 0) >= wanted) {
    return `TABLESAMPLE BERNOULLI (${percent.toPrecision(2)} %, seeded), then the N lowest of a seeded hash`;
  }
  // Short (the estimate was off, or the table holds fewer than N rows): every row, as without TABLESAMPLE.
  await everyRow();
  return 'a seeded hash of every row, keeping the N lowest (TABLESAMPLE came out short)';
}
