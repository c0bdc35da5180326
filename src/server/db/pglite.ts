// PGlite behind a worker thread (pglite-worker.ts), with a deadline on every statement. PGlite ignores
// statement_timeout and computes on the thread that calls it, so one hostile predicate used to hold
// every request; here a statement past the deadline ends the worker, and a new one reopens the same
// data directory: PostgreSQL's recovery keeps everything committed, the open transaction is lost.
// An in-memory server keeps its cluster in a private directory (mkdtemp, 0700) removed on close.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ResourceLimits } from 'node:worker_threads';
import { Worker } from 'node:worker_threads';
import { x as untar } from 'tar';
import { HttpError } from '../errors.js';
import { GateQueue } from './gate-queue.js';
import type { CopyFormat, Db, Queryable } from './handle.js';
import type { WorkerInit, WorkerReply, WorkerRequest } from './pglite-worker.js';

/** A statement stopped at the server's deadline: the request that ran it answers 422 with this reason. */
export class QueryDeadlineError extends HttpError {
  constructor(timeoutMs: number) {
    super(
      422,
      'query_deadline',
      `A warehouse query ran past the server's deadline of ${timeoutMs / 1000} s and was stopped (canceling statement due to statement timeout); simplify the check or query less data.`,
      { timeoutMs },
    );
  }
}

type Distribute<T> = T extends unknown ? Omit<T, 'id'> : never;
type Call = Distribute<WorkerRequest>;

interface Answer {
  rows: unknown[];
  blob?: Uint8Array;
}

interface Pending {
  resolve(answer: Answer): void;
  reject(error: Error): void;
}

const WORKER_URL = new URL(
  import.meta.url.endsWith('.ts') ? './pglite-worker.ts' : './pglite-worker.js',
  import.meta.url,
);

/**
 * The young generation of a PGlite worker's JavaScript heap: at most 8 MB instead of V8's default (which grows
 * it to 32 MB), in the service's database worker and in each gate sandbox. A worker's own JavaScript holds
 * little (an old generation of 18-20 MB: the database lives in WebAssembly memory), and what a plan's requests
 * allocate there is short-lived. A no-change plan of 2,000 models, paired between fresh pairs of servers of the
 * same data (docs/bench.md, "Plans at once, twentieth pass"): the server's RSS -16 to -20 MB alone and -23 to
 * -83 MB three at once (lower in 31 of 33 rounds); its CPU the same on an idle machine, -25 to -43 ms a plan at
 * a load of 6-10 (fewer full collections of the worker's heap, whose marking runs on V8's helper threads).
 */
const WORKER_HEAP: ResourceLimits = { maxYoungGenerationSizeMb: 8 };

/**
 * The service's own database keeps its data in files (a data dir, or a private one), so the page cache
 * holds what PostgreSQL's buffer cache would: 16 MB of shared_buffers instead of PGlite's 128 MB leaves
 * about 120 MB of the WebAssembly heap untouched (PGlite zeroes its buffers at start).
 */
const SERVICE_SHARED_BUFFERS = '16MB';

/** How often the service's own database looks for tables to analyse (PgliteWorkerDb.keepStatistics). */
export const ANALYZE_EVERY_MS = 60_000;

let compiled: Promise<WebAssembly.Module> | undefined;
/** The WebAssembly global (the project's lib has no DOM, which declares it as a value). */
const wasmGlobal = (
  globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WebAssembly.Module> } }
).WebAssembly;

/**
 * pglite.wasm (9 MB), compiled once per process and shared by every worker (the service's database and
 * its sandboxes) instead of compiled again by each. `npm run server` runs Node with `--liftoff-only`
 * (a V8 flag that only the command line sets): V8's optimizing tier recompiled PostgreSQL's hottest
 * functions during the first statements and held 450–550 MB while it did (start-up peak 1.0–1.1 GB);
 * with the baseline compiler alone the peak is under 300 MB and start-up and queries were no slower.
 */
export function pgliteModule(): Promise<WebAssembly.Module> {
  compiled ??= (async () => {
    const wasm = new URL('./pglite.wasm', import.meta.resolve('@electric-sql/pglite'));
    return wasmGlobal.compile(await readFile(wasm));
  })();
  compiled.catch(() => (compiled = undefined));
  return compiled;
}

export async function openPgliteWorker(
  dataDir: string | undefined,
  cluster: () => Promise<Uint8Array>,
  queryTimeoutMs: number,
  options: {
    sandbox: boolean;
    sharedBuffers?: string;
    rowLimit?: number;
    scratchDir?: string;
    /** The service's own database (`sandbox`): how often it analyses its stale tables; default ANALYZE_EVERY_MS. */
    analyzeEveryMs?: number;
  } = {
    sandbox: true,
  },
): Promise<Db> {
  const privateDir = dataDir ? undefined : await mkdtemp(join(options.scratchDir ?? tmpdir(), 'gds-pglite-'));
  try {
    const db = new PgliteWorkerDb(
      dataDir ?? (privateDir as string),
      queryTimeoutMs,
      privateDir,
      options.sharedBuffers ?? SERVICE_SHARED_BUFFERS,
      await pgliteModule(),
    );
    if (options.sandbox) {
      db.sandbox = sandboxesOf(cluster, queryTimeoutMs, db, options.scratchDir);
      db.gateQueue = new GateQueue({
        slots: GATE_SLOTS,
        depth: GATE_QUEUE_DEPTH,
        startDeadlineMs: Math.min(GATE_START_DEADLINE_MS, queryTimeoutMs),
      });
    }
    if (options.rowLimit !== undefined) db.rowLimit = options.rowLimit;
    if (privateDir) await unpack(await cluster(), privateDir);
    await db.start();
    if (options.sandbox) db.keepStatistics(options.analyzeEveryMs ?? ANALYZE_EVERY_MS);
    return db;
  } catch (error) {
    if (privateDir) await rm(privateDir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * Writes the empty cluster's files into a fresh data directory as a stream, 64 KB at a time. PGlite's own
 * `loadDataDir` holds the whole tarball unpacked in memory (about 90 MB, for 38 MB of files), which the
 * process kept afterwards: idle RSS 70 MB higher than a PGlite opened on files already there.
 */
async function unpack(tarball: Uint8Array, dir: string): Promise<void> {
  const problems: string[] = [];
  // Its entries are named from the root (`/base/1/…`): tar keeps them inside `dir` and says so (an INFO).
  const onwarn = (code: string, message: string | Error) => {
    if (code !== 'TAR_ENTRY_INFO') problems.push(`${code}: ${String(message)}`);
  };
  await pipeline(Readable.from(slices(tarball, 64 * 1024)), untar({ cwd: dir, onwarn }));
  if (problems.length > 0) throw new Error(`the empty cluster could not be unpacked: ${problems[0]}`);
}

/** The bytes in slices: gunzip given the whole tarball at once inflates all of it in one go. */
function* slices(bytes: Uint8Array, size: number): Generator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

/** How many checks may run at once on PGlite: each holds a sandbox of its own (a worker, 16 MB of shared_buffers). */
export const SANDBOXES = 2;
/**
 * Gate works at once: one more than the sandboxes, so the next copies its rows while the others check, and
 * starts checking as soon as a sandbox frees.
 */
export const GATE_SLOTS = SANDBOXES + 1;
/** Requests' gate works that may wait for one of the GATE_SLOTS; one more is refused with 503 at once. */
const GATE_QUEUE_DEPTH = 6;
/** How long a request's gate work may wait to start: well within a client's 30 s wait for an answer. */
const GATE_START_DEADLINE_MS = 10_000;
/** A sandbox unused this long is closed, and its memory returned. */
const SANDBOX_IDLE_MS = 30_000;
/** A sandbox holds copies of a few tables: PostgreSQL's buffer cache need not be PGlite's 128 MB. */
const SANDBOX_SHARED_BUFFERS = '16MB';

/**
 * The sandboxes of a PGlite database: in-memory PGlites, each in a worker of its own, opened when a
 * check finds none free (up to SANDBOXES; past that a check waits for one), closed after
 * SANDBOX_IDLE_MS unused, lent to one caller at a time. At its deadline a sandbox's worker is ended
 * and restarted, as the service's is, while the service's database and the other sandbox answer.
 */
function sandboxesOf(
  cluster: () => Promise<Uint8Array>,
  queryTimeoutMs: number,
  owner: PgliteWorkerDb,
  scratchDir: string | undefined,
): NonNullable<Db['sandbox']> {
  const open = new Set<Db>();
  const idle = new Map<Db, NodeJS.Timeout>();
  const waiting: Array<{ resolve: (sandbox: Db) => void; reject: (error: unknown) => void }> = [];
  let opening = 0;
  let closed = false;
  const retire = async (sandbox: Db) => {
    clearTimeout(idle.get(sandbox));
    idle.delete(sandbox);
    open.delete(sandbox);
    await sandbox.close().catch(() => undefined);
  };
  owner.onClose(async () => {
    closed = true;
    for (const waiter of waiting.splice(0)) waiter.reject(new Error('the database is closed'));
    for (const sandbox of open) await retire(sandbox);
  });
  const acquire = async (): Promise<Db> => {
    if (closed) throw new Error('the database is closed');
    const [free] = idle.keys();
    if (free) {
      clearTimeout(idle.get(free));
      idle.delete(free);
      return free;
    }
    if (open.size + opening >= SANDBOXES)
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    opening++;
    let sandbox: Db;
    try {
      sandbox = await openPgliteWorker(undefined, cluster, queryTimeoutMs, {
        sandbox: false,
        sharedBuffers: SANDBOX_SHARED_BUFFERS,
        ...(scratchDir === undefined ? {} : { scratchDir }),
      });
    } catch (error) {
      opening--;
      const next = waiting.shift(); // it waited for this one: it tries to open one of its own
      if (next) acquire().then(next.resolve, next.reject);
      throw error;
    }
    opening--;
    open.add(sandbox);
    return sandbox;
  };
  const release = (sandbox: Db) => {
    const next = waiting.shift();
    if (next) return next.resolve(sandbox);
    if (closed) return void retire(sandbox);
    const timer = setTimeout(() => void retire(sandbox), SANDBOX_IDLE_MS);
    timer.unref();
    idle.set(sandbox, timer);
  };
  /** A sandbox that failed otherwise than by its deadline may be broken: closed, and a waiter opens another. */
  const discard = (sandbox: Db) => {
    void retire(sandbox);
    const next = waiting.shift();
    if (next) acquire().then(next.resolve, next.reject);
  };
  return async <T>(fn: (sandbox: Db) => Promise<T>): Promise<T> => {
    const sandbox = await acquire();
    let value: T;
    try {
      value = await fn(sandbox);
    } catch (error) {
      if (error instanceof QueryDeadlineError) release(sandbox);
      else discard(sandbox);
      throw error;
    }
    release(sandbox);
    return value;
  };
}

/** Who goes first when both wait for the connection: requests' statements, then gate work's. */
type Priority = 'first' | 'later';

/** The bytes a `COPY (…) TO` wrote (none when it wrote no row). */
function copyOutRequest(select: string, format: CopyFormat = 'text') {
  return { op: 'copyOut' as const, select, ...(format === 'binary' ? { binary: true } : {}) };
}

async function copiedOut(answer: Promise<Answer>): Promise<Uint8Array> {
  return (await answer).blob ?? new Uint8Array();
}

class PgliteWorkerDb implements Db {
  sandbox?: Db['sandbox'];
  rowLimit?: number;
  private readonly closing: Array<() => Promise<void>> = [];
  readonly kind = 'pglite' as const;
  private worker: Worker | undefined;
  /** Resolves when a worker is up (a restart replaces it). */
  private ready: Promise<void> = Promise.resolve();
  /** Bumped on each restart: a transaction of an earlier generation is gone. */
  private generation = 0;
  /** Why the last restart happened: what a transaction of an earlier generation fails with. */
  private restartReason: Error = new Error('the database restarted');
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  gateQueue?: GateQueue;
  /** One statement or transaction at a time, as PGlite itself runs them: whether one holds the connection. */
  private held = false;
  /** Who waits for the connection: requests' statements first, then gate work's, each in order. */
  private readonly waiters: Record<Priority, Array<() => void>> = { first: [], later: [] };
  private closed = false;

  constructor(
    private readonly dataDir: string,
    readonly queryTimeoutMs: number,
    private readonly privateDir: string | undefined,
    private readonly sharedBuffers: string,
    private readonly module: WebAssembly.Module,
  ) {}

  async start(): Promise<void> {
    const init: WorkerInit = {
      dataDir: this.dataDir,
      module: this.module,
      sharedBuffers: this.sharedBuffers,
    };
    const worker = new Worker(WORKER_URL, { workerData: init, resourceLimits: WORKER_HEAP });
    this.worker = worker;
    await new Promise<void>((resolve, reject) => {
      const onError = (error: Error) => reject(error);
      const onExit = (code: number) =>
        reject(new Error(`the database worker exited (code ${code}) while starting`));
      worker.once('error', onError);
      worker.once('exit', onExit);
      worker.once('message', (reply: WorkerReply) => {
        worker.off('error', onError);
        worker.off('exit', onExit);
        if ('ready' in reply) resolve();
        else reject(new Error('the database worker did not start'));
      });
    });
    worker.on('message', (reply: WorkerReply) => this.settle(reply));
    worker.on('error', (error) => this.lost(worker, error));
    worker.on('exit', (code) => this.lost(worker, new Error(`the database worker exited (code ${code})`)));
  }

  private settle(reply: WorkerReply): void {
    if ('ready' in reply) return;
    const pending = this.pending.get(reply.id);
    if (!pending) return;
    this.pending.delete(reply.id);
    if (reply.ok) pending.resolve({ rows: reply.rows ?? [], ...(reply.blob ? { blob: reply.blob } : {}) });
    else pending.reject(Object.assign(new Error(reply.error.message), reply.error.fields));
  }

  /** The worker died on its own (not by a deadline): fail what it held, and start a new one. */
  private lost(worker: Worker, error: Error): void {
    if (worker !== this.worker || this.closed) return;
    this.restart(error);
  }

  private restart(reason: Error): void {
    const old = this.worker;
    this.worker = undefined;
    this.generation++;
    this.restartReason = reason;
    for (const [id, pending] of this.pending) {
      this.pending.delete(id);
      pending.reject(reason);
    }
    this.ready = (async () => {
      await old?.terminate();
      await this.start();
    })();
    this.ready.catch(() => undefined);
  }

  /** Sends one request; at the deadline the worker is ended and restarted, and this rejects. */
  private async send(call: Call, generation?: number): Promise<Answer> {
    await this.ready;
    if (generation !== undefined && generation !== this.generation) throw this.restartReason;
    const worker = this.worker;
    if (!worker || this.closed) throw new Error('the database is closed');
    const id = this.nextId++;
    return new Promise<Answer>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (!this.pending.has(id)) return;
        this.restart(new QueryDeadlineError(this.queryTimeoutMs));
      }, this.queryTimeoutMs);
      timer.unref();
      this.pending.set(id, {
        resolve: (answer) => {
          clearTimeout(timer);
          resolve(answer);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      try {
        worker.postMessage({ ...call, id } as WorkerRequest);
      } catch (error) {
        this.pending.delete(id);
        clearTimeout(timer);
        reject(error as Error); // e.g. a parameter that cannot be copied to the worker
      }
    });
  }

  private async exclusive<T>(fn: () => Promise<T>, priority: Priority = 'first'): Promise<T> {
    if (this.held || this.waiters.first.length > 0 || this.waiters.later.length > 0) {
      await new Promise<void>((resolve) => this.waiters[priority].push(resolve));
    } else this.held = true;
    try {
      return await fn();
    } finally {
      const next = this.waiters.first.shift() ?? this.waiters.later.shift();
      if (next)
        next(); // the connection passes to it: still held
      else this.held = false;
    }
  }

  query<T = Record<string, unknown>>(sql: string, params?: unknown[], priority?: Priority): Promise<T[]> {
    return this.exclusive(
      async () => (await this.send({ op: 'query', sql, ...(params ? { params } : {}) })).rows as T[],
      priority,
    );
  }

  copyOut(select: string, format?: CopyFormat, priority?: Priority): Promise<Uint8Array> {
    return this.exclusive(() => copiedOut(this.send(copyOutRequest(select, format))), priority);
  }

  async copyIn(table: string, data: Uint8Array, priority?: Priority): Promise<void> {
    await this.exclusive(() => this.send({ op: 'copyIn', table, data }), priority);
  }

  async exec(sql: string, priority?: Priority): Promise<void> {
    await this.exclusive(() => this.send({ op: 'exec', sql }), priority);
  }

  /**
   * Gate work in the bounded queue, on a view of this database whose statements wait behind requests'
   * (a read is answered between a gate run's statements, not after all of them).
   */
  gateWork<T>(work: (db: Db) => Promise<T>, background = false): Promise<T> {
    const queue = this.gateQueue;
    if (!queue) return work(this);
    const later: Db = {
      kind: this.kind,
      queryTimeoutMs: this.queryTimeoutMs,
      ...(this.rowLimit === undefined ? {} : { rowLimit: this.rowLimit }),
      ...(this.sandbox === undefined ? {} : { sandbox: this.sandbox }),
      query: (sql, params) => this.query(sql, params, 'later'),
      exec: (sql) => this.exec(sql, 'later'),
      copyOut: (select, format) => this.copyOut(select, format, 'later'),
      copyIn: (table, data) => this.copyIn(table, data, 'later'),
      transaction: (fn) => this.transaction(fn, 'later'),
      close: () => Promise.reject(new Error('gate work does not close the database')),
    };
    return queue.run(() => work(later), background);
  }

  transaction<T>(fn: (tx: Queryable) => Promise<T>, priority?: Priority): Promise<T> {
    return this.exclusive(async () => {
      await this.send({ op: 'begin' });
      const generation = this.generation;
      const tx: Queryable = {
        query: async <R>(sql: string, params?: unknown[]) =>
          (await this.send({ op: 'query', sql, ...(params ? { params } : {}) }, generation)).rows as R[],
        exec: async (sql: string) => void (await this.send({ op: 'exec', sql }, generation)),
        copyOut: (select: string, format?: CopyFormat) =>
          copiedOut(this.send(copyOutRequest(select, format), generation)),
        copyIn: async (table: string, data: Uint8Array) =>
          void (await this.send({ op: 'copyIn', table, data }, generation)),
      };
      let result: T;
      try {
        result = await fn(tx);
      } catch (error) {
        if (generation === this.generation) await this.send({ op: 'rollback' }, generation);
        throw error;
      }
      await this.send({ op: 'commit' }, generation);
      return result;
    }, priority);
  }

  /**
   * Analyses each of the service's tables (schema gds) that was never analysed, or has more rows changed since
   * than 50 and a tenth of it: PostgreSQL's autovacuum rule, which PGlite does not run. Its statements wait
   * behind requests'. Returns the tables analysed.
   */
  async analyzeStale(): Promise<string[]> {
    const stale = await this.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
        WHERE n.nspname = 'gds' AND c.relkind = 'r'
          AND (c.reltuples < 0 OR coalesce(s.n_mod_since_analyze, 0) > 50 + 0.1 * c.reltuples)
        ORDER BY c.relname`,
      undefined,
      'later',
    );
    for (const { name } of stale) await this.exec(`ANALYZE gds.${quotedName(name)}`, 'later');
    return stale.map((table) => table.name);
  }

  /**
   * The planner's statistics, kept as autovacuum keeps PostgreSQL's: `analyzeStale` every `everyMs`. Without
   * statistics PGlite's planner takes any range of a column for a third of the table, and reads a recent
   * window of 1,000,000 audit entries whole (docs/bench.md).
   */
  keepStatistics(everyMs: number): void {
    let running = false;
    const timer = setInterval(() => {
      if (running || this.closed) return;
      running = true;
      this.analyzeStale()
        .catch(() => undefined) // closing, or a restart: the next tick tries again
        .finally(() => (running = false));
    }, everyMs);
    timer.unref();
    this.onClose(async () => clearInterval(timer));
  }

  /** Runs `fn` when the database closes (the sandbox closes with it). */
  onClose(fn: () => Promise<void>): void {
    this.closing.push(fn);
  }

  async close(): Promise<void> {
    for (const fn of this.closing) await fn();
    await this.exclusive(async () => {
      await this.send({ op: 'close' }).catch(() => undefined);
      this.closed = true;
      await this.ready.catch(() => undefined); // a close past the deadline restarted the worker
      await this.worker?.terminate();
    });
    if (this.privateDir) await rm(this.privateDir, { recursive: true, force: true });
  }
}

/** A table name as an SQL identifier. */
function quotedName(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
