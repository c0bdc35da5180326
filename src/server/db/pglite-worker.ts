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
  | { id: number; op: 'query'; sql: string; params?: unknown[] }
  /** `COPY (select) TO …` (text format, or binary): answers its bytes (as `blob`). */
  | { id: number; op: 'copyOut'; select: string; binary?: boolean }
  /** `COPY table FROM …` over `data`. */
  | { id: number; op: 'copyIn'; table: string; data: Uint8Array }
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

/**
 * Where copies go through: a file of PGlite's in-memory file system (/tmp is Emscripten's MEMFS, not the
 * data directory). Its contents are one array, grown by copying, and read back as one: PGlite's
 * '/dev/blob' keeps every write of a COPY as an array of its own (one a row, 100,000 for a table of
 * 100,000 rows), then joins them in a Blob, and those small blocks, freed among others, kept glibc's
 * arena grown after every gate run (`npm run bench embedded-memory`, docs/server.md "Where PGlite ends").
 */
const COPY_FILE = '/tmp/gds-copy';

interface MemoryFs {
  readFile(path: string): Uint8Array;
  writeFile(path: string, data: Uint8Array): void;
  unlink(path: string): void;
}

/** PGlite's Emscripten file system (not in its types). */
const fs = () => (lite as unknown as { Module: { FS: MemoryFs } }).Module.FS;

/** Frees the copy file's memory (a COPY that failed may have written part of it, or none). */
function removeCopyFile(): void {
  try {
    fs().unlink(COPY_FILE);
  } catch {
    // not there
  }
}

async function handle(request: WorkerRequest): Promise<{ rows?: unknown[]; blob?: Uint8Array }> {
  const target = open?.tx ?? lite;
  switch (request.op) {
    case 'query':
      return { rows: (await target.query(request.sql, request.params)).rows };
    case 'copyOut':
      try {
        await target.query(
          `COPY (${request.select}) TO '${COPY_FILE}'${request.binary === true ? ' WITH (FORMAT binary)' : ''}`,
        );
        return { blob: fs().readFile(COPY_FILE) };
      } finally {
        removeCopyFile();
      }
    case 'copyIn':
      try {
        fs().writeFile(COPY_FILE, request.data);
        await target.query(`COPY ${request.table} FROM '${COPY_FILE}'`);
        return {};
      } finally {
        removeCopyFile();
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
