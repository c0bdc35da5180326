// Table records, the data plane (§4.3): list and walk pages, create, patch, delete, bulk-update, import.
import type {
  BulkUpdateRequest,
  BulkUpdateResult,
  ImportResult,
  operations,
  RecordPage,
  RecordValues,
  TableRecord,
} from '../../contract/types.js';
import { walkCursorPages } from '../paging.js';
import { pathOf } from '../transport.js';
import type { CallOptions, Transport } from '../transport.js';

export type ListRecordsQuery = NonNullable<operations['listRecords']['parameters']['query']>;
export type IterateRecordsOptions = Omit<ListRecordsQuery, 'page' | 'cursor'> & CallOptions;

/** Largest page the service serves; walking uses it to make the fewest requests. */
export const MAX_RECORDS_PAGE = 100;

export interface RecordsApi {
  list(tableId: string, query?: ListRecordsQuery, options?: CallOptions): Promise<RecordPage>;
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
  /** Items with `id` are updated, items without are created. */
  bulkUpdate(
    tableId: string,
    records: BulkUpdateRequest['records'],
    options?: CallOptions,
  ): Promise<BulkUpdateResult>;
  /** Upsert: rows whose `key` column matches are updated, others inserted. */
  import(tableId: string, rows: RecordValues[], key: string, options?: CallOptions): Promise<ImportResult>;
}

export function recordsApi(transport: Transport): RecordsApi {
  const recordsPath = (tableId: string) => pathOf('/api/tables/{tableId}/records', { tableId });
  const recordPath = (tableId: string, recordId: string) =>
    pathOf('/api/tables/{tableId}/records/{recordId}', { tableId, recordId });

  const list: RecordsApi['list'] = async (tableId, query, options) => {
    return transport.send<RecordPage>({
      method: 'GET',
      path: recordsPath(tableId),
      query,
      ...options,
    });
  };

  return {
    list,
    iterate(tableId, { limit = MAX_RECORDS_PAGE, search, signal } = {}) {
      return walkCursorPages(async (cursor) => {
        const res = await list(
          tableId,
          { limit, search, ...(cursor === undefined ? {} : { cursor }) },
          { signal },
        );
        return { items: res.records, nextCursor: res.nextCursor };
      });
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
      return transport.send<BulkUpdateResult>({
        method: 'POST',
        path: pathOf('/api/tables/{tableId}/bulk-update', { tableId }),
        body: { records } satisfies BulkUpdateRequest,
        ...options,
      });
    },
    async import(tableId, rows, key, options) {
      return transport.send<ImportResult>({
        method: 'POST',
        path: pathOf('/api/tables/{tableId}/import', { tableId }),
        query: { mode: 'upsert', key },
        body: { rows },
        ...options,
      });
    },
  };
}
