// Table records, the data plane (§4.3): list and walk pages, create, patch, delete, bulk-update, import.
import type {
  BulkUpdateRequest,
  BulkUpdateResult,
  ImportResult,
  operations,
  RecordPage,
  RecordValues,
  TableColumns,
  TableRecord,
} from '../../contract/types.js';
import { walkCursorPages } from '../paging.js';
import { JsonBody, pathOf } from '../transport.js';
import type { CallOptions, RequestOptions, ResponseHeaders, Transport } from '../transport.js';

export type ListRecordsQuery = NonNullable<operations['listRecords']['parameters']['query']>;
export type IterateRecordsOptions = Omit<ListRecordsQuery, 'page' | 'cursor'> & CallOptions;

/** Largest page the service serves; walking uses it to make the fewest requests. */
export const MAX_RECORDS_PAGE = 100;

/** Options of the calls a long run makes many of: `onHeaders` sees every answer's headers (rate pacing). */
export interface PacedCallOptions extends CallOptions {
  /** `sentAt`: when the request left (local clock, before any retry). */
  onHeaders?: (headers: ResponseHeaders, sentAt: number) => void;
}

/** The most rows one import request takes (ImportRequest.rows in openapi.yaml). */
export const MAX_IMPORT_ROWS = 10_000;
/** The most items one bulk-update request takes (BulkUpdateRequest.records in openapi.yaml). */
export const MAX_BULK_ITEMS = 1_000;

export interface RecordsApi {
  list(tableId: string, query?: ListRecordsQuery, options?: PacedCallOptions): Promise<RecordPage>;
  /** One record by the id a listing gives it. */
  get(tableId: string, recordId: string, options?: CallOptions): Promise<TableRecord>;
  /** The table's columns, types and required ones (read scope). */
  columns(tableId: string, options?: PacedCallOptions): Promise<TableColumns>;
  /** Every record matching `search`, page after page by cursor (default page size 100). */
  iterate(tableId: string, options?: IterateRecordsOptions): AsyncGenerator<TableRecord, void, undefined>;
  create(tableId: string, values: RecordValues, options?: CallOptions): Promise<TableRecord>;
  patch(
    tableId: string,
    recordId: string,
    changes: RecordValues,
    options?: CallOptions,
  ): Promise<TableRecord>;
  delete(tableId: string, recordId: string, options?: CallOptions): Promise<void>;
  /** Items with `id` are updated, items without are created (or the whole body, `{"records":[…]}`, as JSON). */
  bulkUpdate(
    tableId: string,
    records: BulkUpdateRequest['records'] | JsonBody,
    options?: PacedCallOptions,
  ): Promise<BulkUpdateResult>;
  /** Upsert: rows whose `key` column matches are updated, others inserted (or the whole body, `{"rows":[…]}`). */
  import(
    tableId: string,
    rows: RecordValues[] | JsonBody,
    key: string,
    options?: PacedCallOptions,
  ): Promise<ImportResult>;
}

export function recordsApi(transport: Transport): RecordsApi {
  const recordsPath = (tableId: string) => pathOf('/api/tables/{tableId}/records', { tableId });
  const recordPath = (tableId: string, recordId: string) =>
    pathOf('/api/tables/{tableId}/records/{recordId}', { tableId, recordId });

  /** A request whose answer's headers go to `onHeaders` before its body is returned. */
  const paced = async <T>(request: RequestOptions, options: PacedCallOptions = {}): Promise<T> => {
    const { onHeaders, ...call } = options;
    const sentAt = Date.now();
    const answer = await transport.request<T>({ ...request, ...call });
    onHeaders?.(answer.headers, sentAt);
    return answer.data;
  };

  const list: RecordsApi['list'] = async (tableId, query, options) =>
    paced<RecordPage>({ method: 'GET', path: recordsPath(tableId), query }, options);

  return {
    list,
    iterate(tableId, { limit = MAX_RECORDS_PAGE, search, signal } = {}) {
      return walkCursorPages(recordsPath(tableId), async (cursor) => {
        const res = await list(
          tableId,
          { limit, search, ...(cursor === undefined ? {} : { cursor }) },
          { signal },
        );
        return { items: res.records, nextCursor: res.nextCursor };
      });
    },
    async get(tableId, recordId, options) {
      return transport.send<TableRecord>({ method: 'GET', path: recordPath(tableId, recordId), ...options });
    },
    async columns(tableId, options) {
      return paced<TableColumns>(
        { method: 'GET', path: pathOf('/api/tables/{tableId}/columns', { tableId }) },
        options,
      );
    },
    async create(tableId, values, options) {
      return transport.send<TableRecord>({
        method: 'POST',
        path: recordsPath(tableId),
        body: values,
        ...options,
      });
    },
    async patch(tableId, recordId, changes, options) {
      return transport.send<TableRecord>({
        method: 'PATCH',
        path: recordPath(tableId, recordId),
        body: changes,
        ...options,
      });
    },
    async delete(tableId, recordId, options) {
      await transport.request<undefined>({
        method: 'DELETE',
        path: recordPath(tableId, recordId),
        ...options,
      });
    },
    async bulkUpdate(tableId, records, options) {
      return paced<BulkUpdateResult>(
        {
          method: 'POST',
          path: pathOf('/api/tables/{tableId}/bulk-update', { tableId }),
          body: records instanceof JsonBody ? records : ({ records } satisfies BulkUpdateRequest),
        },
        options,
      );
    },
    async import(tableId, rows, key, options) {
      return paced<ImportResult>(
        {
          method: 'POST',
          path: pathOf('/api/tables/{tableId}/import', { tableId }),
          query: { mode: 'upsert', key },
          body: rows instanceof JsonBody ? rows : { rows },
        },
        options,
      );
    },
  };
}
