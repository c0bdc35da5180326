// A table name wherever a table id goes: an argument shaped like an id (`tbl_…`) is used as it
// is, with no request; anything else is a name, looked up once per process with one `GET /api/tables?name=`
// (case-insensitive, exact; several names at once with the name repeated, resolveTableIds). One table of that name is used; several are exit 2 listing each id with its
// environment (`--env` picks). When no table has that name, the argument may still be an id of another
// shape: one `GET /api/tables/{ref}/status` says whether it is; if not, exit 5, with the nearest name when
// one is close.
import { CliError, ExitCode } from '../core/errors.js';
import type { ApiClient } from '../client/index.js';
import { ApiError } from '../client/errors.js';
import type { TableListRow } from '../client/areas/tables.js';
import { closest } from '../core/did-you-mean.js';
import { echoed } from '../core/echo.js';
import { lines, onOneLine } from '../core/terminal-text.js';

export type TableRefClient = Pick<ApiClient, 'tables'>;

/** The shape of the service's table and governance ids: what is never looked up as a name. */
const TABLE_ID = /^tbl_[A-Za-z0-9]+$/;

export function isTableId(ref: string): boolean {
  return TABLE_ID.test(ref);
}

export interface ResolveOptions {
  /** `--env`: among several tables of the name, the one in this environment. */
  env?: string | undefined;
  /** The flag or argument the reference came from, for messages (default `<tableId>`). */
  flag?: string;
  signal?: AbortSignal;
}

/** Names already resolved in this process, per client: each name costs one request at most. */
const resolved = new WeakMap<object, Map<string, Promise<TableListRow[]>>>();

function namesResolved(client: TableRefClient): Map<string, Promise<TableListRow[]>> {
  let cache = resolved.get(client);
  if (cache === undefined) {
    cache = new Map();
    resolved.set(client, cache);
  }
  return cache;
}

function rowsNamed(client: TableRefClient, name: string, signal?: AbortSignal): Promise<TableListRow[]> {
  const cache = namesResolved(client);
  const key = name.toLowerCase();
  let rows = cache.get(key);
  if (rows === undefined) {
    rows = client.tables.list({ name }, signal === undefined ? {} : { signal });
    // A failed lookup is not remembered: the next call asks again.
    rows.catch(() => cache.delete(key));
    cache.set(key, rows);
  }
  return rows;
}

/** The table id a command sends for `ref`: the id itself, or the one table the name denotes. */
export async function resolveTableId(
  client: TableRefClient,
  ref: string,
  options: ResolveOptions = {},
): Promise<string> {
  if (isTableId(ref)) return ref;
  const flag = options.flag ?? '<tableId>';
  const named = await rowsNamed(client, ref, options.signal);
  const env = options.env;
  const candidates =
    env === undefined ? named : named.filter((t) => t.environmentLabel.toLowerCase() === env.toLowerCase());
  const [only] = candidates;
  if (only !== undefined && candidates.length === 1) return only.id;
  if (candidates.length > 1) {
    const rows = candidates.map((t) => `  ${t.id}  ${t.environmentLabel}  ${t.state}`);
    throw new CliError(
      lines`${candidates.length} tables are named ${ref}${env === undefined ? '' : ` in ${env}`}:\n${rows}`,
      {
        exitCode: ExitCode.Usage,
        code: 'ambiguous_table_name',
        suggestion:
          env === undefined
            ? `Pick one with --env <environment>, or pass its id as ${flag}.`
            : `Pass the id of the one you mean as ${flag}.`,
        details: {
          name: ref,
          tables: candidates.map((t) => ({ id: t.id, environmentLabel: t.environmentLabel })),
        },
      },
    );
  }
  if (named.length === 0 && (await isIdOfATable(client, ref, options.signal))) return ref;
  throw await notFound(client, ref, named, env, flag);
}

/**
 * The table ids of several references (`tokens issue --table`, repeated): the names among them looked up together
 * (`named`: up to 500 names a request) instead of a request a name, then each resolved as resolveTableId resolves
 * one (--env, several tables of a name, errors). A name that lookup found no table of is asked alone, as before:
 * it may be an id of another shape, or it is on its way to an error.
 */
export async function resolveTableIds(
  client: TableRefClient,
  refs: readonly string[],
  options: ResolveOptions = {},
): Promise<string[]> {
  const names = [...new Set(refs.filter((ref) => !isTableId(ref)))];
  const cache = namesResolved(client);
  const unasked = names.filter((name) => !cache.has(name.toLowerCase()));
  if (unasked.length > 1) {
    const found = await client.tables.named(
      unasked,
      options.signal === undefined ? {} : { signal: options.signal },
    );
    for (const name of unasked) {
      const key = name.toLowerCase();
      const rows = found.filter((table) => table.name.toLowerCase() === key);
      if (rows.length > 0) cache.set(key, Promise.resolve(rows));
    }
  }
  return Promise.all(refs.map((ref) => resolveTableId(client, ref, options)));
}

/** Whether `ref`, named by no table, is the id of one (an id not shaped `tbl_…`): 404 says it is not. */
async function isIdOfATable(client: TableRefClient, ref: string, signal?: AbortSignal): Promise<boolean> {
  try {
    await client.tables.status(ref, signal === undefined ? {} : { signal });
    return true;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return false;
    throw error;
  }
}

/** The most tables a "did you mean" reads in a request: a page of the list. */
const NEAR_PAGE = 1000;

/**
 * The names a "did you mean" of `ref` is chosen among, on the way to an error, in at most three pages whatever the
 * workspace's size (the whole list of 100,000 tables took 3.5-5 s): every name of a workspace of fewer than
 * NEAR_PAGE tables (its first page is all of it); else those starting as the first half of `ref` does (a typo in
 * its second half, or a name `ref` begins), and when they are more than a page, those starting as all of `ref` but
 * its last character does too.
 */
async function namesNear(client: TableRefClient, ref: string): Promise<string[]> {
  const names = new Set<string>();
  for await (const page of client.tables.pages({ withTotal: false }, [NEAR_PAGE, NEAR_PAGE])) {
    for (const table of page.tables) names.add(table.name);
    if (page.tables.length < NEAR_PAGE) return [...names];
    break;
  }
  names.clear();
  for (const length of [Math.ceil(ref.length / 2), ref.length - 1]) {
    const tables = await client.tables.startingWith(ref.slice(0, length), NEAR_PAGE);
    for (const table of tables) names.add(table.name);
    if (tables.length < NEAR_PAGE) break;
  }
  return [...names];
}

async function notFound(
  client: TableRefClient,
  ref: string,
  named: TableListRow[],
  env: string | undefined,
  flag: string,
): Promise<CliError> {
  if (named.length > 0 && env !== undefined) {
    return new CliError(`No table named ${echoed(ref)} in ${echoed(env)}.`, {
      exitCode: ExitCode.NotFound,
      code: 'table_not_found',
      suggestion: `${echoed(ref)} is in ${[...new Set(named.map((t) => onOneLine(t.environmentLabel)))].join(', ')}: pass that --env, or drop it.`,
      details: {
        name: ref,
        env,
        tables: named.map((t) => ({ id: t.id, environmentLabel: t.environmentLabel })),
      },
    });
  }
  const near = closest(ref, await namesNear(client, ref).catch(() => []));
  return new CliError(`Table not found: ${echoed(ref)}`, {
    exitCode: ExitCode.NotFound,
    code: 'table_not_found',
    suggestion:
      near === undefined
        ? `No table you can see is named ${echoed(ref)}: gds list shows their names and ids (either goes as ${flag}).`
        : `Did you mean ${near}? gds list shows the tables' names and ids (either goes as ${flag}).`,
    details: { name: ref, ...(near === undefined ? {} : { didYouMean: near }) },
  });
}
