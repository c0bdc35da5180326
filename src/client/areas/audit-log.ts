// The workspace audit log (§4.4): one page, or every entry following `nextCursor`.
import type { AuditEntry, AuditLogPage, operations } from '../../contract/types.js';
import { walkCursorPages } from '../paging.js';
import type { CallOptions, Transport } from '../transport.js';

export type AuditLogQuery = NonNullable<operations['listAuditLog']['parameters']['query']>;
export type IterateAuditLogOptions = Omit<AuditLogQuery, 'cursor'> & CallOptions;

/** Largest page the service serves; walking uses it to make the fewest requests. */
export const MAX_AUDIT_PAGE = 200;

export interface AuditLogApi {
  page(query?: AuditLogQuery, options?: CallOptions): Promise<AuditLogPage>;
  /** Every entry, newest first, page after page (default page size 200). */
  iterate(options?: IterateAuditLogOptions): AsyncGenerator<AuditEntry, void, undefined>;
}

export function auditLogApi(transport: Transport): AuditLogApi {
  const page: AuditLogApi['page'] = async (query, options) => {
    return transport.send<AuditLogPage>({
      method: 'GET',
      path: '/api/workspace/audit-log',
      query,
      ...options,
    });
  };
  return {
    page,
    iterate({ limit = MAX_AUDIT_PAGE, eventType, since, signal } = {}) {
      return walkCursorPages('/api/workspace/audit-log', async (cursor) => {
        const res = await page({ limit, eventType, since, cursor }, { signal });
        return { items: res.entries, nextCursor: res.nextCursor };
      });
    },
  };
}
