// `gate run --sample`: which rows a Gate 1 dry run reads. Rows are numbered 1..total in the table's
// natural order (see relation.ts); a sample keeps:
//   head:N      rows 1..N (the first N);
//   tail:N      rows total-N+1..total (the last N);
//   random:N    N rows drawn uniformly without replacement: the N lowest md5(seed || row number),
//               with a seed drawn per run and returned in the proof, so every check of one run
//               reads the same rows (and a run can be told apart from another);
//   chunks:K@N  K runs of N consecutive rows, their starts spread evenly from the first row to
//               total-N+1 (chunk i of K starts at 1 + floor(i * (total - N) / (K - 1)); K = 1 is
//               head:N); chunks overlap, and are read once, when K * N > total.
import { randomBytes } from 'node:crypto';
import { badRequest } from '../errors.js';

export const MAX_SAMPLE_ROWS = 1_000_000;
export const MAX_CHUNKS = 1000;

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

/**
 * The WHERE/ORDER/LIMIT tail that keeps a sample's rows of `src` (which has `__gds_ord`, the row
 * number, and `__gds_total`). `param` binds a value and returns its placeholder; `totalSql` is a
 * scalar subquery counting the rows (chunks need the total outside the per-row scan).
 */
export function sampleFilter(
  sample: SampleSpec,
  seed: string,
  param: (value: unknown) => string,
  totalSql: string,
): string {
  switch (sample.kind) {
    case 'head':
      return `WHERE __gds_ord <= ${param(sample.rows)}::bigint`;
    case 'tail':
      return `WHERE __gds_ord > __gds_total - ${param(sample.rows)}::bigint`;
    case 'random':
      return `ORDER BY md5(${param(seed)}::text || __gds_ord::text) LIMIT ${param(sample.rows)}::bigint`;
    case 'chunks': {
      // Uncorrelated, so PostgreSQL builds the set of row numbers once and probes it per row.
      const k = `${param(sample.chunks)}::bigint`;
      const n = `${param(sample.rows)}::bigint`;
      const total = totalSql;
      const start = `1 + CASE WHEN ${k} = 1 THEN 0 ELSE floor(g.i * GREATEST(${total} - ${n}, 0)::numeric / (${k} - 1))::bigint END`;
      return `WHERE __gds_ord IN (SELECT ${start} + o.j FROM generate_series(0, ${k} - 1) AS g(i), generate_series(0, ${n} - 1) AS o(j))`;
    }
  }
}
