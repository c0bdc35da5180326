// The steward's queue (`gds review`): the open notifications of the tables submitted for review.
import type { Schema } from '../../contract/types.js';
import { cursorPages } from '../paging.js';
import type { CallOptions, Transport } from '../transport.js';

export type QueueEntry = Schema<'Notification'>;

export interface NotificationsApi {
  /**
   * The queue a page at a time (oldest first; `pageSizes`: the first page's, then every other's; up to 1,000),
   * following the service's cursor; the first page carries `total`.
   */
  queuePages(
    pageSizes: readonly [first: number, rest: number],
    options?: CallOptions,
  ): AsyncGenerator<{ entries: QueueEntry[]; total?: number }, void, undefined>;
  /** The whole queue in one answer (no limit, no cursor: every open notification). */
  queue(options?: CallOptions): Promise<QueueEntry[]>;
}

export function notificationsApi(transport: Transport): NotificationsApi {
  return {
    async queue(options) {
      const list = await transport.send<Schema<'NotificationList'>>({
        method: 'GET',
        path: '/api/notifications',
        ...options,
      });
      return list.notifications;
    },
    async *queuePages([first, rest], options) {
      const walk = cursorPages('/api/notifications', (cursor) =>
        transport.send<Schema<'NotificationList'>>({
          method: 'GET',
          path: '/api/notifications',
          query: { limit: cursor === undefined ? first : rest, cursor },
          ...options,
        }),
      );
      for await (const page of walk) {
        yield { entries: page.notifications, ...(page.total === undefined ? {} : { total: page.total }) };
      }
    },
  };
}
