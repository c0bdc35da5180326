// Data plane (§4.3, §7.1, §8): records list/create/patch/delete, bulk-update and import. DATA-API
// tokens only; rate limited per token with X-RateLimit-* headers on every response.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TablePermission } from '../../core/scopes.js';
import type {
  BulkUpdateRequest,
  BulkUpdateResult,
  ImportRequest,
  ImportResult,
  RecordPage,
  RecordValues,
  TableColumns,
} from '../../contract/types.js';
import { requireDataApi } from '../auth/caller.js';
import { recordAudit } from '../audit.js';
import type { AuditInput } from '../audit.js';
import type { AppContext } from '../context.js';
import { assertRecordsWithinEmbedded } from '../db/embedded-limit.js';
import type { Queryable } from '../db/handle.js';
import { callerOf } from '../context.js';
import { parseBody } from '../contract.js';
import { badRequest } from '../errors.js';
import { checkIds } from '../input-rule.js';
import type { Query } from '../query.js';
import { intParam, rejectUnknownParams, stringParam } from '../query.js';
import {
  assertRecord,
  assertValues,
  deleteRecord,
  getRecord,
  insertRecord,
  listRecords,
  upsertByKey,
  updateRecord,
} from '../records/store.js';
import type { GovernedTable } from '../records/tables.js';
import { admitDataPlane, grantedTable } from '../records/access.js';
import { readJsonBodies } from '../json-body.js';

type TableRequest = FastifyRequest<{ Params: { tableId: string; recordId?: string }; Querystring: Query }>;

/** The table endpoints: their own hook authenticates and rate-limits (headers on every answer, 401 too). */
export const DATA_PLANE_ROUTES = new Set([
  '/api/tables/:tableId/columns',
  '/api/tables/:tableId/records',
  '/api/tables/:tableId/records/:recordId',
  '/api/tables/:tableId/bulk-update',
  '/api/tables/:tableId/import',
]);

export function recordRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.register(async (scope) => {
    // Row values keep their digits: a numeric 123456789012345678.123456 or an int8 above 2^53 is not rounded
    // to a double on the way in (JSON.parse's), but kept as its text (checked, stored and served as sent).
    readJsonBodies(scope, { keepDigits: true });
    scope.addHook('onRequest', async (request, reply) => {
      request.caller = await admitDataPlane(ctx, request, reply);
      // §7.1's order, all before the body is read: the audience (401), then the table (404 none, 403 outside
      // the grant or without the permission the method needs), then the record a write names (404 when the
      // table holds none of that id). The handler takes the table from here.
      const caller = requireDataApi(request.caller);
      const { tableId, recordId } = request.params as { tableId: string; recordId?: string };
      checkIds(request.params);
      const permission = request.method === 'GET' ? 'read' : 'write';
      const table = await grantedTable(ctx, caller, tableId, permission);
      if (permission === 'write' && recordId !== undefined) await assertRecord(ctx.db, table, recordId);
      admitted.set(request, { permission, table });
    });

    scope.get('/api/tables/:tableId/records', async (request: TableRequest) => {
      const { table } = await tableFor(ctx, request, 'read');
      const query = request.query;
      rejectUnknownParams(query, ['page', 'limit', 'search', 'cursor']);
      // §4.3 bounds `limit` only: any page is served, one past the last rows empty (its offset costs no more).
      const page = intParam(query, 'page', 1, Number.MAX_SAFE_INTEGER, 1);
      const limit = intParam(query, 'limit', 1, 100, 50);
      const search = stringParam(query, 'search');
      const cursor = stringParam(query, 'cursor');
      const result = await listRecords(ctx.db, table, {
        page,
        limit,
        ...(search === undefined ? {} : { search }),
        ...(cursor === undefined ? {} : { cursor }),
      });
      const response: RecordPage = { ...result, ...(cursor === undefined ? { page } : {}), limit };
      return response;
    });

    // What a client needs to write rows the table takes (CSV columns and their types, required ones), with
    // the read scope alone: a DATA-API token cannot read the management plane's table details.
    scope.get('/api/tables/:tableId/columns', async (request: TableRequest) => {
      const { table } = await tableFor(ctx, request, 'read');
      const response: TableColumns = {
        tableId: table.id,
        name: table.name,
        mode: table.mode,
        columns: table.columns.map((c) => ({ name: c.name, type: c.type, required: c.required })),
      };
      return response;
    });

    scope.get('/api/tables/:tableId/records/:recordId', async (request: TableRequest) => {
      const { table } = await tableFor(ctx, request, 'read');
      return getRecord(ctx.db, table, request.params.recordId ?? '');
    });

    scope.post('/api/tables/:tableId/records', async (request: TableRequest, reply) => {
      const { table, caller } = await writableTable(ctx, request);
      const values = parseBody<RecordValues>('RecordValues', request.body);
      assertValues(table, values, false);
      const record = await ctx.db.transaction(async (tx) => {
        const created = await insertRecord(tx, table, values, now(ctx));
        await recordWrite(tx, ctx, audit(caller.userId, table, 'RECORD_CREATED', { recordId: created.id }));
        return created;
      });
      return reply.code(201).send(record);
    });

    scope.patch('/api/tables/:tableId/records/:recordId', async (request: TableRequest) => {
      const recordId = request.params.recordId ?? '';
      const { table, caller } = await writableTable(ctx, request);
      const values = parseBody<RecordValues>('RecordValues', request.body);
      assertValues(table, values, true);
      return ctx.db.transaction(async (tx) => {
        const updated = await updateRecord(tx, table, recordId, values, now(ctx));
        await recordWrite(
          tx,
          ctx,
          audit(caller.userId, table, 'RECORD_UPDATED', { recordId, columns: Object.keys(values) }),
        );
        return updated;
      });
    });

    scope.delete('/api/tables/:tableId/records/:recordId', async (request: TableRequest, reply) => {
      const recordId = request.params.recordId ?? '';
      const { table, caller } = await writableTable(ctx, request);
      await ctx.db.transaction(async (tx) => {
        await deleteRecord(tx, table, recordId);
        await recordWrite(tx, ctx, audit(caller.userId, table, 'RECORD_DELETED', { recordId }));
      });
      return reply.code(204).send();
    });

    scope.post('/api/tables/:tableId/bulk-update', async (request: TableRequest) => {
      const { table, caller } = await writableTable(ctx, request);
      const body = parseBody<BulkUpdateRequest>('BulkUpdateRequest', request.body);
      body.records.forEach((item, index) => assertValues(table, item.data, item.id !== undefined, index));
      return ctx.db.transaction(async (tx) => {
        const result: BulkUpdateResult = { created: 0, updated: 0, records: [] };
        const at = now(ctx);
        for (const item of body.records) {
          if (item.id === undefined) {
            result.records.push(await insertRecord(tx, table, item.data, at));
            result.created += 1;
          } else {
            checkIds({ recordId: item.id });
            result.records.push(await updateRecord(tx, table, item.id, item.data, at));
            result.updated += 1;
          }
        }
        if (result.created > 0) await assertRecordsWithinEmbedded(ctx.db, tx, table, 'Creating these rows');
        await recordWrite(
          tx,
          ctx,
          audit(caller.userId, table, 'RECORDS_BULK_UPDATED', {
            created: result.created,
            updated: result.updated,
          }),
        );
        return result;
      });
    });

    scope.post('/api/tables/:tableId/import', async (request: TableRequest) => {
      const { table, caller } = await writableTable(ctx, request);
      rejectUnknownParams(request.query, ['mode', 'key']);
      const mode = stringParam(request.query, 'mode');
      const key = stringParam(request.query, 'key');
      if (mode !== 'upsert') {
        throw badRequest(
          'invalid_query',
          `mode must be "upsert"; got ${mode === undefined ? 'none' : `"${mode}"`}.`,
          {
            parameter: 'mode',
          },
        );
      }
      if (key === undefined || !table.columns.some((c) => c.name === key)) {
        throw badRequest(
          'invalid_query',
          `key must name a column of table ${table.name} (${table.columns.map((c) => c.name).join(', ')}).`,
          { parameter: 'key' },
        );
      }
      const body = parseBody<ImportRequest>('ImportRequest', request.body);
      body.rows.forEach((row, index) => {
        if (row[key] === undefined || row[key] === null) {
          throw badRequest('invalid_record', `Row ${index} has no value for the key column ${key}.`, {
            index,
            key,
          });
        }
        assertValues(table, row, true, index);
      });
      return ctx.db.transaction(async (tx) => {
        const result: ImportResult = await upsertByKey(tx, table, key, body.rows, now(ctx));
        if (result.inserted > 0) await assertRecordsWithinEmbedded(ctx.db, tx, table, 'Importing these rows');
        await recordWrite(tx, ctx, audit(caller.userId, table, 'RECORDS_IMPORTED', { key, ...result }));
        return result;
      });
    });
  });
}

/** Every data-plane write is audited and is an ingest: it makes the table's review proof stale. */
async function recordWrite(tx: Queryable, ctx: AppContext, entry: AuditInput): Promise<void> {
  await recordAudit(tx, ctx.clock, entry);
  await tx.query('UPDATE gds.tables SET data_version = data_version + 1 WHERE id = $1', [entry.tableId]);
}

function now(ctx: AppContext): string {
  return new Date(ctx.clock()).toISOString();
}

/** The table the data plane's hook admitted each request to, with the permission it checked. */
const admitted = new WeakMap<FastifyRequest, { permission: TablePermission; table: GovernedTable }>();

async function tableFor(ctx: AppContext, request: TableRequest, permission: TablePermission) {
  const caller = requireDataApi(await callerOf(ctx, request));
  const checked = admitted.get(request);
  const table =
    checked?.permission === permission
      ? checked.table
      : await grantedTable(ctx, caller, request.params.tableId, permission);
  return { table, caller };
}

/**
 * A table the caller may write: write scope, and Mode B (Mode A rows live in the warehouse). A write to one
 * record of a Mode A table names a record first (the hook): one the warehouse object lacks is 404 as §4.3
 * says, and only one that is there is refused as read only.
 */
async function writableTable(ctx: AppContext, request: TableRequest) {
  const { table, caller } = await tableFor(ctx, request, 'write');
  if (table.mode === 'MODE_A') {
    throw badRequest(
      'read_only_table',
      `Table ${table.name} is a Mode A (connector-backed) table: its rows are read from the warehouse object ${table.source} and the service never writes them. Change the data in the warehouse.`,
      { tableId: table.id, mode: table.mode, source: table.source },
    );
  }
  return { table, caller };
}

function audit(
  userId: string,
  table: GovernedTable,
  action: string,
  details: Record<string, unknown>,
): AuditInput {
  return {
    workspaceId: table.workspaceId,
    userId,
    tableId: table.id,
    action,
    resource: 'record',
    environmentLabel: table.environmentLabel,
    gateMode: table.gateMode,
    details,
  };
}
