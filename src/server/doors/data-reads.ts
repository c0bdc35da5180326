// What the GraphQL and MCP doors read, each a call into the data plane's own code (records/access.ts,
// records/store.ts): the granted tables, one table's columns, a page of records, a record. A table's
// lifecycle state and semantic contract are certification data, the management plane's (spec §1): no read
// here gives them to a DATA-API token, as REST's table endpoints do not.
import type { TableRecord } from '../../contract/types.js';
import type { IntegrationCaller } from '../auth/caller.js';
import type { AppContext } from '../context.js';
import { badRequest } from '../errors.js';
import { checkIds, checkInput } from '../input-rule.js';
import { stringParam } from '../query.js';
import type { GrantedTableRow } from '../records/access.js';
import { grantedTable, grantedTables } from '../records/access.js';
import type { ListResult } from '../records/store.js';
import { getRecord, listRecords } from '../records/store.js';

/** The most records one page holds, as on REST (`limit` at most 100). */
export const MAX_PAGE = 100;

export interface TableDescription {
  id: string;
  name: string;
  environment: string;
  mode: string;
  columns: Array<{ name: string; type: string; required: boolean }>;
}

/** GraphQL passes an argument given as null as null: it is the same as one not given. */
export interface PageRequest {
  tableId: string;
  first?: number | null | undefined;
  after?: string | null | undefined;
  search?: string | null | undefined;
}

/**
 * The reads of one DATA-API caller. Each argument is held to the input rule (input-rule.ts) before it reaches
 * the database: a NUL or an unpaired surrogate is 400 `invalid_input` in the door's own error shape, never
 * the database's message.
 */
export class DataReads {
  constructor(
    private readonly ctx: AppContext,
    private readonly caller: IntegrationCaller,
  ) {}

  tables(): Promise<GrantedTableRow[]> {
    return grantedTables(this.ctx, this.caller);
  }

  async table(tableId: string): Promise<TableDescription> {
    checkInput({ tableId }, 'request');
    checkIds({ tableId });
    const table = await grantedTable(this.ctx, this.caller, tableId, 'read');
    return {
      id: table.id,
      name: table.name,
      environment: table.environmentLabel,
      mode: table.mode,
      columns: table.columns.map((c) => ({ name: c.name, type: c.type, required: c.required })),
    };
  }

  /** A page by key: the first page counts the matches, later ones (after a cursor) do not. */
  async records(request: PageRequest): Promise<ListResult> {
    checkInput(request, 'request');
    checkIds({ tableId: request.tableId });
    const first = request.first ?? 50;
    if (!Number.isInteger(first) || first < 1 || first > MAX_PAGE)
      throw badRequest('invalid_query', `first must be an integer from 1 to ${MAX_PAGE}; got ${first}.`, {
        parameter: 'first',
      });
    const table = await grantedTable(this.ctx, this.caller, request.tableId, 'read');
    // REST's rule for its `search` parameter: given with a value (an empty one would match no row of a
    // table without a text column, and leave out rows whose text columns are all null).
    const search = stringParam({ search: request.search ?? undefined }, 'search');
    return listRecords(this.ctx.db, table, {
      page: 1,
      limit: first,
      ...(search === undefined ? {} : { search }),
      ...(request.after == null ? {} : { cursor: request.after }),
    });
  }

  async record(tableId: string, recordId: string): Promise<TableRecord> {
    checkInput({ tableId, recordId }, 'request');
    checkIds({ tableId, recordId });
    const table = await grantedTable(this.ctx, this.caller, tableId, 'read');
    return getRecord(this.ctx.db, table, recordId);
  }
}
