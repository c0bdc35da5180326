// The values completion fetches: profiles from the config, the rest from the service with the credentials a
// command would use (the line's own --token/--base/--profile first). Tables are asked for by what was typed,
// one page of them (GET /api/tables?prefix=), never the whole list: a workspace of 100,000 tables answers in
// milliseconds; so are open recertification requests, by the start of their id (?prefix=). A job id is of
// the newest tables: one page of the list newest first (or, from a service from before `order=newest`, the
// list oldest first to its end, within half of the wait).
// Answers are kept briefly under $XDG_CACHE_HOME/gds/complete/ (folder 0700, files 0600, written
// whole), keyed by the base URL, the token's digest, the kind and (tables, requests) what was typed, so TAB
// after TAB asks the service once. Anything that fails gives no values: the caller prints nothing and exits 0.
import { createHash } from 'node:crypto';
import {
  chmodSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { ApiClient } from '../client/index.js';
import type { TableListRow } from '../client/areas/tables.js';
import { cacheDir } from '../core/folders.js';
import type { Candidate, DynamicKind } from './completion.js';
import { createApiClient } from '../client/index.js';
import { envMilliseconds } from '../core/env-milliseconds.js';
import { loadConfig } from '../auth/config.js';
import { resolveCredentials } from '../auth/credentials.js';
import { authProviderFor } from '../auth/refresh.js';

/** How long an answer of the service is used again. */
export const COMPLETION_CACHE_MS = 20_000;
/** The tables one completion asks for: what a person reads through; typing on narrows them. */
export const TABLE_CANDIDATES = 100;
/** The open recertification requests one completion asks for, by the start of their id typed. */
export const REQUEST_CANDIDATES = 100;
/** The tables whose gate jobs a completion of a job id lists: the newest of the list, one page of it. */
const JOB_TABLES = 10;
const JOB_TABLES_PAGE = 1_000;
/**
 * The pages of a list oldest first (a service from before `order=newest`) read at most for them (a workspace
 * of 200,000 tables), within half of TAB's wait.
 */
const JOB_TABLES_PAGES = 200;
/**
 * How long one completion waits for the service's answer (GDS_COMPLETION_TIMEOUT_MS, default 2 s): short, as
 * TAB must not hang; a slow or loaded service may be given more.
 */
export function completionWaitMs(env: NodeJS.ProcessEnv = process.env): number {
  return envMilliseconds(env.GDS_COMPLETION_TIMEOUT_MS, 2_000, { max: MAX_COMPLETION_WAIT_MS });
}

const MAX_COMPLETION_WAIT_MS = 600_000;

export function completionCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheDir(env), 'complete');
}

export interface ValueOptions {
  /** --token/--base/--profile as given on the line being completed. */
  flags: { token?: string | undefined; base?: string | undefined; profile?: string | undefined };
  version: string;
  env?: NodeJS.ProcessEnv;
  now?: () => number;
}

/** The values of `kind` that start with `prefix` (table names and ids both, for tables). */
export async function dynamicValues(
  kind: DynamicKind,
  prefix: string,
  options: ValueOptions,
): Promise<Candidate[]> {
  const all = kind === 'profiles' ? await profiles(options.env) : await fromService(kind, prefix, options);
  return all.filter((candidate) => candidate.value.toLowerCase().startsWith(prefix.toLowerCase()));
}

async function profiles(env: NodeJS.ProcessEnv | undefined): Promise<Candidate[]> {
  const config = await loadConfig({ env: env ?? process.env });
  return Object.entries(config.profiles).map(([name, profile]) => ({
    value: name,
    description: [profile.user, profile.base].filter(Boolean).join(' '),
  }));
}

async function fromService(
  kind: Exclude<DynamicKind, 'profiles'>,
  prefix: string,
  options: ValueOptions,
): Promise<Candidate[]> {
  const env = options.env ?? process.env;
  const now = options.now ?? Date.now;
  const credentials = await resolveCredentials(options.flags, env, {});
  // The tables and requests are those of what was typed: an answer for `cu` is no answer for `or`.
  const asked = kind === 'tables' || kind === 'requests' ? prefix : '';
  const key = createHash('sha256')
    .update(`${credentials.baseUrl}\0${credentials.token}\0${kind}\0${asked}`)
    .digest('hex')
    .slice(0, 32);
  const dir = completionCacheDir(env);
  const file = join(dir, `${key}.json`);
  const cached = readCache(file, now());
  if (cached !== undefined) return cached;
  const wait = completionWaitMs(env);
  const asking = now();
  const client = createApiClient({
    baseUrl: credentials.baseUrl,
    auth: authProviderFor(credentials, { env }),
    version: options.version,
    // Never retried; the connection gets half the wait (1 s by default).
    timeouts: { connectMs: wait / 2, headersMs: wait, bodyMs: wait },
    retry: { maxRetries: 0, maxRetryAfterSeconds: 0 },
    logger: () => undefined,
  });
  try {
    const values = await fetchKind(client, kind, asked, () => now() - asking < wait / 2);
    writeCache(dir, file, values, now());
    return values;
  } finally {
    await client.close();
  }
}

type Client = ApiClient;

/** `inTime`: whether there is time left to read on (a long list is read within a budget). */
async function fetchKind(
  client: Client,
  kind: Exclude<DynamicKind, 'profiles'>,
  prefix: string,
  inTime: () => boolean,
): Promise<Candidate[]> {
  switch (kind) {
    case 'tables': {
      const tables = await client.tables.startingWith(prefix, TABLE_CANDIDATES);
      return [
        ...tables.map((t) => ({ value: t.name, description: `${t.id} ${t.environmentLabel} ${t.state}` })),
        ...tables.map((t) => ({ value: t.id, description: `${t.name} ${t.environmentLabel} ${t.state}` })),
      ].filter(unique());
    }
    case 'connectors': {
      const connectors = await client.connectors.list();
      return connectors.map((c) => ({ value: c.id, description: `${c.name} ${c.environmentLabel}` }));
    }
    case 'environments': {
      const connectors = await client.connectors.list();
      return connectors.map((c) => ({ value: c.environmentLabel })).filter(unique());
    }
    case 'requests': {
      const requests = await client.recertification.startingWith(prefix, REQUEST_CANDIDATES);
      return requests.map((r) => ({ value: r.id, description: `${r.tableName} ${r.cause}` }));
    }
    case 'jobs': {
      // The service lists jobs per table: those of the newest tables, one page of the list newest first. A
      // service from before that lists oldest first only: read to its end, unless that takes longer than the
      // budget; then the newest of what was read, and each candidate says so.
      const newest = await client.tables.newest(JOB_TABLES);
      const { tables, cutAt } =
        newest === undefined ? await newestReadForward(client, inTime) : { tables: newest };
      const cut = cutAt === undefined ? '' : ` (of the first ${cutAt.toLocaleString('en')} tables)`;
      const lists = await Promise.all(tables.map((t) => client.gateJobs.list(t.id, { limit: 5 })));
      return lists.flatMap((list, i) =>
        list.jobs.map((job) => ({
          value: job.id,
          description: `${tables[i]?.name ?? ''} ${job.type} ${job.status}${cut}`,
        })),
      );
    }
  }
}

/**
 * The JOB_TABLES newest tables of a list read oldest first, and how many were read when it was not read to its
 * end.
 */
async function newestReadForward(
  client: Client,
  inTime: () => boolean,
): Promise<{ tables: TableListRow[]; cutAt?: number }> {
  let newest: TableListRow[] = [];
  let read = 0;
  let pages = 0;
  for await (const page of client.tables.pages({ withTotal: false }, [JOB_TABLES_PAGE, JOB_TABLES_PAGE])) {
    newest = [...newest, ...page.tables].slice(-JOB_TABLES);
    read += page.tables.length;
    pages += 1;
    if (page.tables.length < JOB_TABLES_PAGE) return { tables: newest };
    if (pages >= JOB_TABLES_PAGES || !inTime()) return { tables: newest, cutAt: read };
  }
  return { tables: newest };
}

function unique(): (candidate: Candidate) => boolean {
  const seen = new Set<string>();
  return (candidate) => !seen.has(candidate.value) && seen.add(candidate.value) !== undefined;
}

/**
 * Removes the answers no completion uses any more (older than COMPLETION_CACHE_MS): one is kept for each start
 * of a table typed, and the folder would otherwise grow with every one.
 */
function forgetStale(dir: string, now: number): void {
  for (const name of readdirSync(dir)) {
    if (!name.endsWith('.json')) continue;
    try {
      if (now - statSync(join(dir, name)).mtimeMs > COMPLETION_CACHE_MS)
        rmSync(join(dir, name), { force: true });
    } catch {
      // gone meanwhile (another completion removed it)
    }
  }
}

function readCache(file: string, now: number): Candidate[] | undefined {
  try {
    const stat = statSync(file);
    if (!stat.isFile() || now - stat.mtimeMs > COMPLETION_CACHE_MS || now < stat.mtimeMs - 1_000)
      return undefined;
    if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) return undefined;
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return Array.isArray(parsed) ? (parsed as Candidate[]) : undefined;
  } catch {
    return undefined;
  }
}

function writeCache(dir: string, file: string, values: Candidate[], now: number): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  forgetStale(dir, now);
  const temp = `${file}.${process.pid}.tmp`;
  rmSync(temp, { force: true });
  writeFileSync(temp, JSON.stringify(values), { flag: 'wx', mode: 0o600 });
  renameSync(temp, file);
}
