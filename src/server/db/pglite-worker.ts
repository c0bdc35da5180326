// The worker thread that owns the server's PGlite instance (see pglite.ts). PGlite runs queries on
// the thread that calls it and ignores statement_timeout, so it lives here: the request thread stays
// free, and a query past the deadline is stopped by ending this thread. No relative imports: Node
// runs this file as it is (TypeScript, by type stripping; its .js twin once compiled).
import { parentPort, workerData } from 'node:worker_threads';
import type { Transaction } from '@electric-sql/pglite';
import { PGlite } from '@electric-sql/pglite';

export interface WorkerInit {
  dataDir: string;
  /** PostgreSQL's shared_buffers, e.g. `16MB`; PGlite's default (128MB) when absent. */
  sharedBuffers?: string;
  /** pglite.wasm compiled once by the process (see pglite.ts): every worker shares its code. */
  module?: WebAssembly.Module;
}

export type WorkerRequest =
  /** `blob`: what `COPY … FROM '/dev/blob'` reads; a `COPY … TO '/dev/blob'` answers with its bytes. */
  | { id: number; op: 'query'; sql: string; params?: unknown[]; blob?: Uint8Array }
  | { id: number; op: 'exec'; sql: string }
  | { id: number; op: 'begin' | 'commit' | 'rollback' | 'close' };

export type WorkerReply =
  | { id: number; ok: true; rows?: unknown[]; blob?: Uint8Array }
  | { id: number; ok: false; error: { message: string; fields: Record<string, unknown> } }
  | { ready: true };

const port = parentPort;
if (!port) throw new Error('pglite-worker runs as a worker thread');
const init = workerData as WorkerInit;
const lite = await PGlite.create({
  dataDir: init.dataDir,
  ...(init.module ? { pgliteWasmModule: init.module } : {}),
  ...(init.sharedBuffers
    ? { startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${init.sharedBuffers}`] }
    : {}),
});

/** The open transaction, and how to end it (PGlite's transaction() commits when its callback resolves). */
let open: { tx: Transaction; end: (commit: boolean) => void; done: Promise<void> } | undefined;
const ROLLBACK = Symbol('rollback');

function begin(): Promise<void> {
  return new Promise((started, failed) => {
    const done = lite
      .transaction(
        (tx) =>
          new Promise<void>((commit, rollback) => {
            open = { tx, end: (ok) => (ok ? commit() : rollback(ROLLBACK)), done };
            started();
          }),
      )
      .catch((error: unknown) => {
        if (error !== ROLLBACK) throw error;
      })
      .finally(() => {
        open = undefined;
      });
    done.catch(failed); // BEGIN itself failed
  });
}

async function end(commit: boolean): Promise<void> {
  if (!open) throw new Error('no transaction is open');
  const { done } = open;
  open.end(commit);
  await done;
}

async function handle(request: WorkerRequest): Promise<{ rows?: unknown[]; blob?: Uint8Array }> {
  const target = open?.tx ?? lite;
  switch (request.op) {
    case 'query': {
      const input = request.blob ? { blob: new Blob([request.blob]) } : undefined;
      const result = await target.query(request.sql, request.params, input);
      return result.blob
        ? { rows: result.rows, blob: new Uint8Array(await result.blob.arrayBuffer()) }
        : { rows: result.rows };
    }
    case 'exec':
      await target.exec(request.sql);
      return {};
    case 'begin':
      return begin().then(() => ({}));
    case 'commit':
    case 'rollback':
      return end(request.op === 'commit').then(() => ({}));
    case 'close':
      await lite.close();
      return {};
  }
}

function fieldsOf(error: unknown): Record<string, unknown> {
  if (typeof error !== 'object' || error === null) return {};
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(error)) {
    if (['string', 'number', 'boolean'].includes(typeof value)) fields[key] = value;
  }
  return fields;
}

port.on('message', (request: WorkerRequest) => {
  handle(request).then(
    ({ rows, blob }) =>
      port.postMessage(
        {
          id: request.id,
          ok: true,
          ...(rows ? { rows } : {}),
          ...(blob ? { blob } : {}),
        } satisfies WorkerReply,
        blob ? [blob.buffer as ArrayBuffer] : [],
      ),
    (error: unknown) =>
      port.postMessage({
        id: request.id,
        ok: false,
        error: { message: error instanceof Error ? error.message : String(error), fields: fieldsOf(error) },
      } satisfies WorkerReply),
  );
});
port.postMessage({ ready: true } satisfies WorkerReply);
