// `gds records list|get|create|update|delete`: table rows through the data plane (§4.3), with a DATA-API
// token (an integration profile from `gds tokens issue --table … --save-profile`). The table argument is an
// id or the name of a table the token grants: a DATA-API token cannot list the workspace's tables, so a name
// is read from the token's own grants (its slug -> id claim), with no request.
import { CliError, ExitCode } from '../core/errors.js';
import { parseLossless } from '../core/lossless-json.js';
import { unverifiedClaims } from '../core/jwt-claims.js';
import { echoed } from '../core/echo.js';
import type { ApiClient } from '../client/index.js';
import type { ListRecordsQuery } from '../client/areas/records.js';
import type { RecordPage, RecordValues, TableRecord } from '../contract/types.js';
import { isTableId, resolveTableId } from './table-ref.js';

export type RecordsClient = Pick<ApiClient, 'records' | 'tables'>;

/** The slug -> table id grants a DATA-API access token (a JWT) carries; empty for any other token. */
export function grantedTables(token: string | undefined): Record<string, string> {
  const tbl = unverifiedClaims(token).tbl;
  if (typeof tbl !== 'object' || tbl === null || Array.isArray(tbl)) return {};
  return Object.fromEntries(
    Object.entries(tbl).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

/**
 * The table id for `ref`: an id as it is; a name the token grants (case-insensitive); else, for a token that
 * grants no table by name (a person's sign-in), the workspace lookup every other command uses.
 */
export async function resolveRecordsTable(
  client: RecordsClient,
  ref: string,
  token: string | undefined,
  options: { env?: string | undefined } = {},
): Promise<string> {
  if (isTableId(ref)) return ref;
  const grants = grantedTables(token);
  const match = Object.entries(grants).find(([slug]) => slug.toLowerCase() === ref.toLowerCase());
  if (match !== undefined) return match[1];
  const granted = Object.entries(grants);
  if (granted.length > 0) {
    // An id of another shape is still tried as one: the service answers 404 or 403 for it.
    if (granted.some(([, id]) => id === ref)) return ref;
    throw new CliError(`This token grants no table named ${echoed(ref)}.`, {
      exitCode: ExitCode.NotFound,
      code: 'table_not_found',
      suggestion: `It grants ${granted.map(([slug, id]) => `${slug} (${id})`).join(', ')}; pass one of those names or ids, or issue a token for ${echoed(ref)} (gds tokens issue --table ${echoed(ref)}:read,write).`,
      details: { name: ref, granted: Object.fromEntries(granted) },
    });
  }
  return resolveTableId(client, ref, {
    flag: '<table>',
    ...(options.env === undefined ? {} : { env: options.env }),
  });
}

export function listRecordsPage(
  client: RecordsClient,
  tableId: string,
  query: Pick<ListRecordsQuery, 'limit' | 'search' | 'cursor'>,
): Promise<RecordPage> {
  return client.records.list(tableId, query);
}

export function getRecord(client: RecordsClient, tableId: string, recordId: string): Promise<TableRecord> {
  return client.records.get(tableId, recordId);
}

export function createRecord(
  client: RecordsClient,
  tableId: string,
  values: RecordValues,
): Promise<TableRecord> {
  return client.records.create(tableId, values);
}

/**
 * Changes some columns of a record. The `id` of `gds records get --json` (the record's, not a column: the
 * service answers with it last, over any column of that name) is dropped when it is this record's, so that
 * get, edit, update round-trips; the service would refuse it as an unknown column.
 */
export function updateRecord(
  client: RecordsClient,
  tableId: string,
  recordId: string,
  changes: RecordValues,
): Promise<TableRecord> {
  return client.records.patch(tableId, recordId, sentChanges(recordId, changes));
}

/** What updateRecord sends of `changes`: without the record's own `id`. */
export function sentChanges(recordId: string, changes: RecordValues): RecordValues {
  const { id, ...columns } = changes;
  return id === recordId ? columns : changes;
}

/**
 * Deletes a record. With `confirm` (a question on a terminal) the record is read first, so that the question
 * can show it and a missing record is a 404 before anything is asked; null when the person said no.
 */
export async function deleteRecord(
  client: RecordsClient,
  tableId: string,
  recordId: string,
  confirm?: (record: TableRecord) => Promise<boolean>,
): Promise<{ tableId: string; id: string; deleted: true } | null> {
  if (confirm !== undefined && !(await confirm(await client.records.get(tableId, recordId)))) return null;
  await client.records.delete(tableId, recordId);
  return { tableId, id: recordId, deleted: true };
}

/** The JSON object of `--data`, `-f FILE` or stdin: a usage error (nothing sent) when it is not one. */
export function parseRecordValues(text: string, from: string): RecordValues {
  let value: unknown;
  try {
    // A byte order mark (Notepad, PowerShell) is no part of the JSON.
    // Digits a double cannot hold (a numeric(30,6), an int8 above 2^53) are sent as written.
    value = parseLossless(text.startsWith('\uFEFF') ? text.slice(1) : text);
  } catch (error) {
    throw new CliError(`${from} is not JSON: ${(error as Error).message}`, {
      exitCode: ExitCode.Usage,
      code: 'invalid_json',
      suggestion: `Give the record as one JSON object, e.g. --data '{"email":"ada@example.com"}'.`,
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CliError(`${from} is not a JSON object of column values.`, {
      exitCode: ExitCode.Usage,
      code: 'invalid_record',
      suggestion: `Give one object keyed by column name, e.g. --data '{"email":"ada@example.com"}'; many rows go through gds records import.`,
    });
  }
  return value as RecordValues;
}
