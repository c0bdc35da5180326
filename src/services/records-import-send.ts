// The batch sender of `gds records import`: a batch goes to the service in one request (import on a key, or
// bulk-update); an item the service refuses by itself (a 400 or 404 naming its index or record id) is
// reported and left out, and the rest is sent again, until the service takes what is left.
import type { ApiClient } from '../client/index.js';
import { ApiError } from '../client/errors.js';
import type { RatePacer } from '../client/rate-pacer.js';
import type { BatchBuffer } from './records-batch.js';
import type { RowError } from './records-input-row.js';

export type ImportClient = Pick<ApiClient, 'records'>;

/** A request, paced by the rate headers: `onHeaders` is given the answer's. */
export type PacedCall = <T>(request: (onHeaders: RatePacer['observe']) => Promise<T>) => Promise<T>;

export interface SenderOptions {
  client: ImportClient;
  tableId: string;
  tableName: string;
  /** The key of an upsert; none: bulk-update. */
  key: string | undefined;
  signal: AbortSignal | undefined;
  call: PacedCall;
  refuse: (row: number, line: number | undefined, error: RowError['error']) => void;
  onNotice: ((message: string) => void) | undefined;
}

export class BatchSender {
  private warnedForeignIds = false;

  constructor(private readonly options: SenderOptions) {}

  /**
   * Sends the batch, each item the service refuses by itself left out of it, and returns what the service
   * wrote. Throws any other failure, the batch then holding the items not yet refused.
   */
  async send(batch: BatchBuffer): Promise<{ sent: number; inserted: number; updated: number }> {
    while (batch.length > 0) {
      try {
        const items = batch.length;
        const result = await this.request(batch);
        return { sent: items, ...result };
      } catch (error) {
        const refusedAt = refusedItem(error, batch);
        const item = refusedAt === undefined ? undefined : batch.place(refusedAt);
        if (refusedAt === undefined || item === undefined) throw error;
        this.options.refuse(item.row, item.line, serviceError(error));
        if (item.id !== undefined && (error as ApiError).status === 404) this.warnForeignIds(item);
        batch.remove(refusedAt);
      }
    }
    return { sent: 0, inserted: 0, updated: 0 };
  }

  private request(batch: BatchBuffer): Promise<{ inserted: number; updated: number }> {
    const { client, tableId, key, signal } = this.options;
    return this.options.call((onHeaders) =>
      key !== undefined
        ? client.records.import(tableId, batch.body(), key, { signal, onHeaders })
        : client.records
            .bulkUpdate(tableId, batch.body(), { signal, onHeaders })
            .then((r) => ({ inserted: r.created, updated: r.updated })),
    );
  }

  /**
   * The service names one such item per request: rows exported from another table would cost a request each,
   * every one refused. Said once, while there is time to stop.
   */
  private warnForeignIds(item: { row: number; id?: string }): void {
    if (this.warnedForeignIds) return;
    this.warnedForeignIds = true;
    this.options.onNotice?.(
      `Row ${item.row} updates record ${item.id}, which ${this.options.tableName} does not have; each such row costs a request of its own. ` +
        'If these rows come from another table, stop (Ctrl-C) and import with --ignore-ids to create them, or with --key <column> to upsert.',
    );
  }
}

/** The item of a batch the service refused by itself, by the index or record id its 400/404 names. */
function refusedItem(error: unknown, batch: BatchBuffer): number | undefined {
  if (!(error instanceof ApiError) || (error.status !== 400 && error.status !== 404)) return undefined;
  const details = error.details as { index?: unknown; recordId?: unknown } | null | undefined;
  if (typeof details?.index === 'number' && details.index >= 0 && details.index < batch.length)
    return details.index;
  if (typeof details?.recordId === 'string') {
    const at = batch.indexOfId(details.recordId);
    if (at >= 0) return at;
  }
  return undefined;
}

/**
 * An error that is the service's answer refusing the request (a 4xx: 401, 403, 404, 413, 429, …): nothing of it
 * was written. A 5xx (a proxy's 502 may come after the work) or no answer at all leaves it unknown.
 */
export function answeredUnwritten(error: unknown): boolean {
  return error instanceof ApiError && error.status >= 400 && error.status < 500 && error.status !== 408;
}

function serviceError(error: unknown): RowError['error'] {
  const api = error as ApiError;
  return {
    code: api.code,
    message: api.message,
    ...(api.details === undefined ? {} : { details: api.details }),
  };
}
