// Certification: the latency of a certify call (checks, version snapshot, audit, the certified view
// re-published in the warehouse) and of a bundle export (read, canonical JSON, sha256), in process.
import { performance } from 'node:perf_hooks';
import { createServer } from '../../src/server/app.js';
import type { BenchModule, BenchRow } from './types.js';

const ROUNDS = 30;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

export const run: BenchModule = async () => {
  const server = await createServer({ port: 0, jobs: 'manual' });
  try {
    const steward = server.ready.users.find((u) => u.role === 'STEWARD')?.accessToken ?? '';
    const orders = server.ready.tables.find((t) => t.name === 'orders')?.id ?? '';
    const call = async (method: string, path: string) => {
      const started = performance.now();
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${steward}` },
      });
      await response.text();
      if (response.status >= 300) throw new Error(`${method} ${path} answered ${response.status}`);
      return performance.now() - started;
    };
    const certify: number[] = [];
    const bundle: number[] = [];
    for (let i = 0; i < ROUNDS; i += 1) {
      await server.db.query("UPDATE gds.tables SET state = 'PENDING_REVIEW' WHERE id = $1", [orders]);
      await server.db.query(
        `INSERT INTO gds.gate_proofs (id, table_id, kind, passed, results, failed_predicates, definition_version,
           gate1_version, data_version, created_by, created_at)
         SELECT 'prf_bench_' || $2, id, 'submit', true, '[]', '[]', definition_version, gate1_version, data_version,
                owner_id, now() FROM gds.tables WHERE id = $1`,
        [orders, i],
      );
      certify.push(await call('POST', `/api/tables/${orders}/semantic-contract/certify`));
      bundle.push(await call('GET', `/api/tables/${orders}/bundle`));
    }
    const rows: BenchRow[] = [
      {
        section: 'certification',
        name: 'certify (median)',
        value: `${median(certify).toFixed(1)} ms`,
        note: `${ROUNDS} rounds, view re-published each time`,
      },
      {
        section: 'certification',
        name: 'bundle export (median)',
        value: `${median(bundle).toFixed(1)} ms`,
        note: 'orders, sha256 over canonical JSON',
      },
    ];
    return rows;
  } finally {
    await server.close();
  }
};
