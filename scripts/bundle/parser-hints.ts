// The functions of libpg-query's WebAssembly that parsing a view reaches, named in the executable's asset for
// V8 to compile ahead: a `compilationHints` section (V8's experimental compilation hints: one byte a
// function, eager in the baseline tier for these, lazy for the others). The executable starts compiling the
// module as a `push` starts (scripts/sea/parser-module.ts), and V8 compiles these on its worker threads while
// the CLI starts, instead of on the main thread at their first call in the parse. V8 reads the section only
// with --experimental-wasm-compilation-hints set as the compile starts; any other reader skips it as a custom
// section, and V8 ignores a section that does not name every function.
//
// The functions are found by parsing the views below in a plain node with V8's trace of what it compiles:
// views of the shapes people push (CTEs, joins, CASE, casts, window functions, aggregates, set operations,
// subqueries) and one the grammar refuses. A function of a shape none of them has compiles at its first call, as without the section.
import { execFileSync } from 'node:child_process';
import { Reader } from '../../src/core/wasm-initial-memory.js';
import { root } from './tools.js';

const VIEWS = [
  `CREATE OR REPLACE VIEW analytics.orders_daily (order_date, store_id, label, total, rank_in_day) AS
WITH moving AS (
  SELECT DATE(o.datetime_added) AS order_date, DATE_TRUNC('MONTH', o.datetime_added) AS month_start,
         o.store_id, COALESCE(s.label, 'unknown') AS label, SUM(o.amount::numeric(18, 2)) AS total,
         COUNT(DISTINCT o.customer_id) FILTER (WHERE o.status = 'paid') AS paid_customers,
         AVG(o.amount) OVER (PARTITION BY o.store_id ORDER BY o.datetime_added
                             ROWS BETWEEN 4 PRECEDING AND CURRENT ROW) AS moving_avg
  FROM sales.orders o
  LEFT JOIN sales.stores s ON s.id = o.store_id AND s.active IS TRUE
  INNER JOIN (SELECT id, MAX(updated_at) AS updated_at FROM sales.customers GROUP BY id) c ON c.id = o.customer_id
  WHERE o.datetime_added >= CURRENT_DATE - INTERVAL '6 months' AND o.store_id IN (1, 2, 3)
    AND o.label NOT LIKE '%test%' AND o.amount BETWEEN 0 AND 1e6
  GROUP BY 1, 2, 3, 4
  HAVING SUM(o.amount) > 0
)
SELECT order_date, store_id, label,
       CASE WHEN total IS NULL THEN 0 WHEN total < 0 THEN -total ELSE total END AS total,
       RANK() OVER (PARTITION BY order_date ORDER BY total DESC NULLS LAST) AS rank_in_day
FROM moving
WHERE EXISTS (SELECT 1 FROM sales.stores x WHERE x.id = moving.store_id)
UNION ALL
SELECT CAST(NULL AS date), NULL, 'none', 0, 1
ORDER BY 1, 2
LIMIT 100`,
  `CREATE VIEW public.v AS SELECT t.id, lower(t.name) || '-' || t.code AS slug, t.meta->>'kind' AS kind,
  extract(epoch FROM now() - t.created_at)::int AS age, array_agg(u.id ORDER BY u.id) AS users,
  NULLIF(t.x, 0) / GREATEST(t.y, 1) AS ratio, t.flag AND NOT t.hidden OR t.forced AS visible
FROM public.things AS t FULL OUTER JOIN public.users u USING (id) CROSS JOIN LATERAL (SELECT 1 AS one) l
WHERE t.id = ANY(ARRAY[1, 2]) GROUP BY t.id, t.name, t.code, t.meta, t.created_at, t.x, t.y, t.flag, t.hidden, t.forced`,
  // Another warehouse's SQL, which PostgreSQL's grammar refuses (push then reads it in the connector's dialect).
  `CREATE VIEW analytics.q AS SELECT * FROM t QUALIFY ROW_NUMBER() OVER (PARTITION BY id ORDER BY ts) = 1`,
];

/** Function indices (imports counted) that parsing VIEWS compiled, in order; none when V8's trace said none. */
export function parserFunctionsReached(): number[] {
  const script =
    "const q = require('libpg-query'); q.loadModule().then(() => { for (const sql of JSON.parse(process.argv[1])) { try { q.parseSync(sql); } catch {} } })";
  const trace = execFileSync(
    process.execPath,
    ['--liftoff-only', '--trace-wasm-compilation-times', '-e', script, JSON.stringify(VIEWS)],
    { cwd: root, encoding: 'utf8' },
  );
  const found = [...trace.matchAll(/#(\d+) using Liftoff/g)].map((match) => Number(match[1]));
  return [...new Set(found)].sort((a, b) => a - b);
}

const SECTION = { import: 2, function: 3, code: 10 } as const;
const EAGER_LIFTOFF = 2 | (1 << 2) | (1 << 4); // strategy eager, baseline and top tier the baseline (Liftoff)
const LAZY = 1; // strategy lazy, tiers V8's own

function leb128(value: number): number[] {
  const out: number[] = [];
  let rest = value;
  do {
    let byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
    if (rest > 0) byte |= 0x80;
    out.push(byte);
  } while (rest > 0);
  return out;
}

/** The module's sections in order: id (0 a custom one, with its name) and where each starts. */
export function sectionsOf(bytes: Uint8Array): Array<{ id: number; name?: string; start: number }> {
  const reader = new Reader(bytes, 8);
  const found: Array<{ id: number; name?: string; start: number }> = [];
  while (reader.at < bytes.length) {
    const start = reader.at;
    const id = reader.byte();
    const end = reader.u32() + reader.at;
    if (id === 0) {
      const length = reader.u32();
      found.push({ id, name: Buffer.from(bytes.subarray(reader.at, reader.at + length)).toString(), start });
    } else found.push({ id, start });
    reader.at = end;
  }
  return found;
}

/**
 * `bytes` with a compilationHints section before the code section naming `functions` (indices with the
 * imports counted) eager; `bytes` as they are when the module's layout is not the one read here.
 */
export function withCompilationHints(bytes: Uint8Array, functions: readonly number[]): Uint8Array {
  let sections: ReturnType<typeof sectionsOf>;
  try {
    sections = sectionsOf(bytes);
  } catch {
    return bytes;
  }
  let imported = 0;
  let declared: number | undefined;
  for (const { id, start } of sections) {
    const reader = new Reader(bytes, start + 1);
    reader.u32(); // the section's size
    if (id === SECTION.import) {
      const count = reader.u32();
      for (let i = 0; i < count; i += 1) {
        for (let name = 0; name < 2; name += 1) {
          const length = reader.u32(); // the module's name, then the field's
          reader.at += length;
        }
        const kind = reader.byte();
        if (kind === 0) {
          imported += 1;
          reader.u32();
        } else if (kind === 1 || kind === 2) {
          if (kind === 1) reader.byte(); // a table's element type
          const flags = reader.u32();
          reader.u32();
          if (flags & 1) reader.u32();
        } else if (kind === 3) {
          reader.at += 2;
        } else {
          return bytes;
        }
      }
    } else if (id === SECTION.function) {
      declared = reader.u32();
    } else if (id === SECTION.code) {
      if (declared === undefined) return bytes;
      const eager = new Set(functions);
      const hints = Array.from({ length: declared }, (_, i) =>
        eager.has(i + imported) ? EAGER_LIFTOFF : LAZY,
      );
      const name = [...Buffer.from('compilationHints')];
      const payload = [...leb128(name.length), ...name, ...leb128(declared), ...hints];
      const section = Uint8Array.from([0, ...leb128(payload.length), ...payload]);
      const out = new Uint8Array(bytes.length + section.length);
      out.set(bytes.subarray(0, start));
      out.set(section, start);
      out.set(bytes.subarray(start), start + section.length);
      return out;
    }
  }
  return bytes;
}
