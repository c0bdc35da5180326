// Governance tables, the CLI's paths (src/contract/openapi.yaml): list, status, DDL, soft delete.
import type { Schema } from '../../contract/types.js';
import { ApiError, refusesParameter } from '../errors.js';
import { arrayElementsReader } from '../json-elements.js';
import { cursorPages } from '../paging.js';
import { pathOf, projectQuery } from '../transport.js';
import type { CallOptions, QueryValue, Transport } from '../transport.js';

export type TableListRow = Schema<'TableListRow'>;
export type TableStatus = Schema<'TableStatus'>;
export type TableDdl = Schema<'TableDdl'>;
export type DeletedTable = Schema<'DeletedTable'>;
export type LifecycleState = Schema<'LifecycleState'>;
export type JobSummary = Schema<'JobSummary'>;
export type TableProjectRequest = Schema<'TableProjectRequest'>;
export type TableProject = Schema<'TableProject'>;
export type HeldTable = Schema<'HeldTable'>;
/** What a narrowed held-tables read left out of the environment (its Mode A tables, with and without a project). */
export type HeldLeft = NonNullable<Schema<'HeldTablePage'>['left']>;

/** What `heldMatching` narrows the environment's tables to: a table matching any part. */
export interface HeldQuery {
  projects?: readonly string[];
  projectPrefix?: string;
  filePrefix?: string;
  names?: readonly string[];
}

export interface TablesApi {
  /**
   * Active tables of the caller's workspace, oldest first; `state` filters by lifecycle state, `name` keeps
   * the tables of that name (case-insensitive, exact).
   */
  list(
    query?: { state?: LifecycleState | undefined; name?: string | undefined },
    options?: CallOptions,
  ): Promise<TableListRow[]>;
  /**
   * The same list a page at a time (`pageSizes`: the first page's, then every other's; up to 1,000), following
   * the service's cursor: the first page carries the whole list's `total` unless `withTotal` is false (a
   * caller that prints pages as they come needs none, and counting a large workspace delays the first page).
   * Stops when the consumer stops.
   */
  pages(
    query: { state?: LifecycleState | undefined; name?: string | undefined; withTotal?: boolean },
    pageSizes: readonly [first: number, rest: number],
    options?: CallOptions,
  ): AsyncGenerator<{ tables: TableListRow[]; total?: number }, void, undefined>;
  /**
   * The tables holding any of `names` (case-insensitive, exact), in as few requests as the URL allows: the
   * names in groups of up to 500 whose query stays under ~6,000 characters, a few groups at a time. A service
   * from before `name` could be repeated refuses it: its whole list is then read and filtered.
   */
  named(names: readonly string[], options?: CallOptions): Promise<TableListRow[]>;
  /**
   * Up to `limit` (1-1,000) tables whose name (case-insensitive) or id starts with `prefix`, in one request
   * (`prefix`; an empty one asks for the list's first page), ordered by the name or id that matched. A
   * service from before `prefix` refuses it: its whole list is then read and filtered, every match kept.
   */
  startingWith(prefix: string, limit: number, options?: CallOptions): Promise<TableListRow[]>;
  /**
   * The `limit` (1-1,000) newest tables, newest first, in one request (`order=newest`, an extension of the
   * list); undefined from a service from before it, which refuses the parameter.
   */
  newest(limit: number, options?: CallOptions): Promise<TableListRow[] | undefined>;
  status(tableId: string, options?: CallOptions): Promise<TableStatus>;
  ddl(tableId: string, options?: CallOptions): Promise<TableDdl>;
  /**
   * Soft-deletes a Mode A governance artifact; the warehouse object stays. With `project`, only a table that
   * project owns (409 `owned_elsewhere` otherwise).
   */
  remove(tableId: string, options?: CallOptions & { project?: string }): Promise<DeletedTable>;
  /**
   * Every table of `environment` with what `gds plan` compares (definition, gate1.yml, contract, owner), read
   * a page of `pageSize` (default 500) at a time, each table parsed alone as its page arrives.
   */
  held(environment: string, options?: HeldOptions): Promise<HeldTable[]>;
  /**
   * The tables of `environment` that `held` would read and `filter` narrows to (any table matching one of its
   * parts: owned by one of `projects` or by a project whose id starts with `projectPrefix`, with no project
   * and a file name starting with `filePrefix`, or whose name, slug or source's object is one of `names`),
   * the names in groups as `named` sends them, and how many Mode A tables of the environment were left out.
   * Undefined from a service from before the filter (it refuses its parameters): read `held` instead.
   */
  heldMatching(
    environment: string,
    filter: HeldQuery,
    options?: HeldOptions,
  ): Promise<{ tables: HeldTable[]; left: HeldLeft } | undefined>;
  /** Records `project` as the table's owner if it is still `previous` (409 `project_changed` otherwise). */
  setProject(tableId: string, request: TableProjectRequest, options?: CallOptions): Promise<TableProject>;
}

/**
 * A held-tables read's options: `pageSize` (default 500); `staleSubmission: false` when the caller plans no
 * submission, so the service does not work out which submissions are stale (rows then carry no
 * `staleSubmission`; a service from before the parameter is asked again without it).
 */
export type HeldOptions = CallOptions & {
  pageSize?: number;
  staleSubmission?: false;
  /** Each row's `promotion` to this environment (what it would take there, and who holds it); a service from
   * before it answers the rows without. */
  promotedTo?: string;
};

/** A 400 `invalid_query` on `name`: a service from before `name` could be repeated. */
function refusesRepeatedName(error: unknown): boolean {
  if (!(error instanceof ApiError) || error.status !== 400 || error.code !== 'invalid_query') return false;
  return (error.details as { parameter?: unknown } | undefined)?.parameter === 'name';
}

/** Names a request of `named` carries at most: the service's bound. */
const NAMES_PER_REQUEST = 500;
/** The query of one such request stays under this many characters: well within any proxy's URL limit. */
const NAMES_QUERY_CHARACTERS = 6_000;
/** Requests of `named` in flight at a time. */
const NAMED_REQUESTS_AT_ONCE = 4;

/** `names` in groups of at most NAMES_PER_REQUEST whose encoded `name=` parameters stay under the limit. */
function nameGroups(names: readonly string[]): string[][] {
  const groups: string[][] = [];
  let group: string[] = [];
  let length = 0;
  for (const name of names) {
    const more = `&name=${encodeURIComponent(name)}`.length;
    if (group.length > 0 && (group.length === NAMES_PER_REQUEST || length + more > NAMES_QUERY_CHARACTERS)) {
      groups.push(group);
      group = [];
      length = 0;
    }
    group.push(name);
    length += more;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

export function tablesApi(transport: Transport): TablesApi {
  /** Every page of a held-tables read of `environment` with `filter`'s parameters, and the first page's `left`. */
  // Set once the service refused `staleSubmission` or `promotedTo` (from before it): not sent again.
  const unknownParams = new Set<string>();
  const heldPage = async (
    query: Record<string, QueryValue>,
    options: HeldOptions,
  ): Promise<Schema<'HeldTablePage'>> => {
    const { pageSize, staleSubmission, promotedTo, ...call } = options;
    const optional: Record<string, string> = {
      ...(staleSubmission === false ? { staleSubmission: 'false' } : {}),
      ...(promotedTo === undefined ? {} : { promotedTo }),
    };
    const sent = Object.fromEntries(Object.entries(optional).filter(([name]) => !unknownParams.has(name)));
    try {
      return await transport.send<Schema<'HeldTablePage'>>({
        method: 'GET',
        path: '/api/held-tables',
        query: { ...query, limit: pageSize ?? 500, ...sent },
        // Each table parsed alone as the page arrives, never the page's 1.5 MB as one string: a no-change plan
        // of 5,000 models peaked at 188-195 MiB with the pages read whole, 161-164 so (docs/bench.md).
        reader: () => arrayElementsReader<Schema<'HeldTablePage'>>('tables'),
        ...call,
      });
    } catch (error) {
      const refused = Object.keys(sent).filter((name) => refusesParameter(error, name));
      if (refused.length === 0) throw error;
      for (const name of refused) unknownParams.add(name);
      return heldPage(query, options);
    }
  };
  const heldPages = async (
    environment: string,
    filter: Record<string, string | string[] | undefined>,
    options: HeldOptions,
  ) => {
    const tables: HeldTable[] = [];
    let left: HeldLeft | undefined;
    let cursor: string | undefined;
    do {
      const page: Schema<'HeldTablePage'> = await heldPage({ environment, ...filter, cursor }, options);
      tables.push(...page.tables);
      left ??= page.left;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    return { tables, left };
  };
  /** The tables holding any of `names`, every page of them (one, unless a thousand hold them). */
  const holding = async (names: readonly string[], options: CallOptions | undefined) => {
    const tables: TableListRow[] = [];
    const walk = cursorPages('/api/tables', (cursor) =>
      transport.send<Schema<'TableList'>>({
        method: 'GET',
        path: '/api/tables',
        query: { name: names, limit: 1000, cursor },
        ...options,
      }),
    );
    for await (const page of walk) tables.push(...page.tables);
    return tables;
  };
  const api: TablesApi = {
    async list(query = {}, options) {
      const { tables } = await transport.send<Schema<'TableList'>>({
        method: 'GET',
        path: '/api/tables',
        query: { state: query.state, name: query.name },
        ...options,
      });
      return tables;
    },
    async *pages(query, [first, rest], options) {
      const pageAfter = (after: string | undefined, withTotal: boolean) =>
        transport.send<Schema<'TableList'>>({
          method: 'GET',
          path: '/api/tables',
          query: {
            state: query.state,
            name: query.name,
            limit: after === undefined ? first : rest,
            cursor: after,
            ...(!withTotal && after === undefined ? { total: 'false' } : {}),
          },
          ...options,
        });
      const walk = cursorPages('/api/tables', (cursor) =>
        pageAfter(cursor, query.withTotal !== false).catch((error: unknown) => {
          // A service from before `total=false` refuses the parameter (400): it is then asked as before.
          if (cursor === undefined && query.withTotal === false && refusesParameter(error, 'total')) {
            return pageAfter(undefined, true);
          }
          throw error;
        }),
      );
      for await (const page of walk) {
        yield { tables: page.tables, ...(page.total === undefined ? {} : { total: page.total }) };
      }
    },
    async named(names, options) {
      const wanted = [...new Set(names)];
      const groups = nameGroups(wanted);
      // By id: two spellings of one name in two groups find the same table twice.
      const tables = new Map<string, TableListRow>();
      try {
        for (let i = 0; i < groups.length; i += NAMED_REQUESTS_AT_ONCE) {
          const answers = await Promise.allSettled(
            groups.slice(i, i + NAMED_REQUESTS_AT_ONCE).map((group) => holding(group, options)),
          );
          for (const answer of answers) {
            if (answer.status === 'rejected') throw answer.reason;
            for (const table of answer.value) tables.set(table.id, table);
          }
        }
      } catch (error) {
        if (!refusesRepeatedName(error)) throw error;
        const lowered = new Set(wanted.map((name) => name.toLowerCase()));
        return (await api.list({}, options)).filter((table) => lowered.has(table.name.toLowerCase()));
      }
      return [...tables.values()];
    },
    async startingWith(prefix, limit, options) {
      try {
        const { tables } = await transport.send<Schema<'TableList'>>({
          method: 'GET',
          path: '/api/tables',
          query: { prefix: prefix === '' ? undefined : prefix, limit, total: 'false' },
          ...options,
        });
        return tables;
      } catch (error) {
        // A service from before `prefix` (or `total=false`) refuses it: the whole list, as it was read before.
        if (!refusesParameter(error, 'prefix', 'total')) throw error;
        const lowered = prefix.toLowerCase();
        return (await api.list({}, options)).filter((table) =>
          [table.name, table.id].some((value) => value.toLowerCase().startsWith(lowered)),
        );
      }
    },
    async newest(limit, options) {
      try {
        const { tables } = await transport.send<Schema<'TableList'>>({
          method: 'GET',
          path: '/api/tables',
          query: { order: 'newest', limit, total: 'false' },
          ...options,
        });
        return tables;
      } catch (error) {
        if (!refusesParameter(error, 'order')) throw error;
        return undefined;
      }
    },
    async status(tableId, options) {
      return transport.send<TableStatus>({
        method: 'GET',
        path: pathOf('/api/tables/{tableId}/status', { tableId }),
        ...options,
      });
    },
    async ddl(tableId, options) {
      return transport.send<TableDdl>({
        method: 'GET',
        path: pathOf('/api/tables/{tableId}/ddl', { tableId }),
        ...options,
      });
    },
    async remove(tableId, options = {}) {
      const { project, ...call } = options;
      return transport.send<DeletedTable>({
        method: 'DELETE',
        path: pathOf('/api/tables/{tableId}', { tableId }),
        ...projectQuery(project),
        ...call,
      });
    },
    async held(environment, options = {}) {
      return (await heldPages(environment, {}, options)).tables;
    },
    async heldMatching(environment, filter, options = {}) {
      const { names = [], ...owners } = filter;
      // The owners' parts go with the first request; the names, if any, in groups as `named` sends them.
      const groups = names.length === 0 ? [[]] : nameGroups([...new Set(names)]);
      const tables = new Map<string, HeldTable>();
      let left: HeldLeft = { otherProjects: 0, byHand: 0 };
      try {
        for (const [i, group] of groups.entries()) {
          const read = await heldPages(
            environment,
            {
              ...(i === 0
                ? {
                    project: owners.projects === undefined ? undefined : [...owners.projects],
                    projectPrefix: owners.projectPrefix,
                    filePrefix: owners.filePrefix,
                  }
                : {}),
              ...(group.length === 0 ? {} : { name: group }),
            },
            options,
          );
          if (i === 0) left = read.left ?? left;
          for (const table of read.tables) {
            // A table the first request left out, found by a later group's names, is not left out.
            if (i > 0 && !tables.has(table.id) && table.mode === 'MODE_A')
              left =
                table.project === null || table.project === undefined
                  ? { ...left, byHand: left.byHand - 1 }
                  : { ...left, otherProjects: left.otherProjects - 1 };
            tables.set(table.id, table);
          }
        }
      } catch (error) {
        if (
          refusesParameter(error, 'project', 'projectPrefix', 'filePrefix', 'name') ||
          refusesRepeatedName(error)
        )
          return undefined;
        throw error;
      }
      return { tables: [...tables.values()], left };
    },
    async setProject(tableId, request, options) {
      return transport.send<TableProject>({
        method: 'PUT',
        path: pathOf('/api/tables/{tableId}/project', { tableId }),
        body: request,
        ...options,
      });
    },
  };
  return api;
}
