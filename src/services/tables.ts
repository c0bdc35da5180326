// `gds list`, `gds quarantine list`, `gds status [--watch]` and `gds delete`: the governance tables of the
// workspace (§4.9), through the CLI's table paths.
import { CliError, ExitCode } from '../core/errors.js';
import type { ApiClient } from '../client/index.js';
import { type PollOptions, pollUntil } from './poll.js';
import type { DeletedTable, LifecycleState, TableListRow, TableStatus } from '../client/areas/tables.js';
import { onOneLine } from '../core/terminal-text.js';

export type TablesClient = Pick<ApiClient, 'tables'>;

/**
 * The table's page in the dashboard: the same address as a registration's trackingUrl. The REST base URL
 * ends in its stage segment (`…/v1`) and the dashboard is beside the stage (`…/dashboard`), behind a
 * path-prefixing proxy too; a base URL of a bare origin keeps the dashboard at its root.
 */
export function tablePageUrl(baseUrl: string, tableId: string): string {
  const base = baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`;
  return new URL(`../dashboard/tables/${encodeURIComponent(tableId)}`, base).toString();
}

/** Largest page the service serves of the table list, and the first page's size (the first line comes soon). */
const MAX_TABLE_PAGE = 1000;
const FIRST_TABLE_PAGE = 100;

/**
 * The table list a page at a time, for printing each as it arrives; with `limit` (-L), only that many
 * tables are asked for (the service pages by it) and no page after them. `withTotal: false`: the first page
 * comes without the list's total (a terminal table alone shows it), sooner on a large workspace.
 */
export async function* listTablePages(
  client: TablesClient,
  options: {
    state?: LifecycleState | undefined;
    limit?: number | undefined;
    signal?: AbortSignal;
    withTotal?: boolean;
  } = {},
): AsyncGenerator<{ rows: TableListRow[]; total?: number }, void, undefined> {
  const first = Math.min(options.limit ?? FIRST_TABLE_PAGE, MAX_TABLE_PAGE);
  const rest = Math.min(options.limit ?? MAX_TABLE_PAGE, MAX_TABLE_PAGE);
  let seen = 0;
  const pages = client.tables.pages(
    { state: options.state, ...(options.withTotal === false ? { withTotal: false } : {}) },
    [first, rest],
    { signal: options.signal },
  );
  for await (const page of pages) {
    yield { rows: page.tables, ...(page.total === undefined ? {} : { total: page.total }) };
    seen += page.tables.length;
    if (options.limit !== undefined && seen >= options.limit) return;
  }
}

export function tableStatus(client: TablesClient, tableId: string): Promise<TableStatus> {
  return client.tables.status(tableId);
}

export type WatchOptions = PollOptions;

/**
 * Polls the table's status until no job is active (after 0.25 s, then backing off up to the interval).
 * `onChange` gets the first status and then each one that differs from the one before; the last status
 * (no active job) is returned.
 */
export async function watchTableStatus(
  client: TablesClient,
  tableId: string,
  options: WatchOptions,
  onChange: (status: TableStatus) => void | Promise<void>,
): Promise<TableStatus> {
  return pollUntil(
    () => client.tables.status(tableId, { signal: options.signal }),
    (status) => status.activeJobs.length === 0,
    (status) => JSON.stringify(status),
    options,
    onChange,
  );
}

/**
 * Soft-deletes a table after `confirm` agreed, shown the table's status first (name, state, source). A Mode
 * B table is sent without asking: the service refuses it (400, §7.3), and that refusal is what to show.
 */
export async function deleteTable(
  client: TablesClient,
  tableId: string,
  confirm: (table: TableStatus) => Promise<boolean>,
): Promise<DeletedTable> {
  const table = await client.tables.status(tableId);
  if (table.mode !== 'MODE_B' && !(await confirm(table))) {
    throw new CliError(`Not deleted: ${onOneLine(table.name)} (${onOneLine(table.id)}) is unchanged.`, {
      exitCode: ExitCode.Failure,
      code: 'not_confirmed',
      suggestion: `Answer y to delete, or pass --yes to skip the question.`,
    });
  }
  return client.tables.remove(tableId);
}
