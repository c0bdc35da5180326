// The CLI's table paths: list (`list`, `quarantine list`), status, DDL (`quarantine open`) and soft delete.
// A person's session JWT or `cli_` token; always the caller's own workspace.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { LIFECYCLE_STATES } from '../../core/lifecycle/index.js';
import type { SessionCaller } from '../auth/caller.js';
import { requireSession } from '../auth/caller.js';
import { loadTableInScope, requireEnvironment, visibleEnvironments } from '../certification/access.js';
import { repairCertifiedView } from '../certification/view.js';
import type { AppContext } from '../context.js';
import { callerOf, guardBeforeBody } from '../context.js';
import { badRequest, HttpError } from '../errors.js';
import type { ApplyInput } from '../governance/engine.js';
import { applyTrigger, governedTransaction, refuseForbiddenTrigger } from '../governance/engine.js';
import { activeJobs, cancelTableJobs } from '../governance/jobs.js';
import { countRequests, dismissRequestsOfDeletedTable } from '../governance/recertification-requests.js';
import { latestCertification, schemaDrift, tableDdl } from '../governance/status.js';
import type { TableRow } from '../governance/tables.js';
import { countTables, listTablePage, loadTable } from '../governance/tables.js';
import type { Query } from '../query.js';
import { booleanParam, intParam, rejectUnknownParams, repeatedStringParam, stringParam } from '../query.js';
import { checkOwner, checkProjectId, projectParam, replaceRefusal } from '../governance/definitions.js';
import { slugOf } from '../../core/table-slug.js';
import { recordAudit, recordAudits } from '../audit.js';
import { decodeListCursor, decodeMatchCursor, encodeListCursor, LIST_ORDERS } from '../list-cursor.js';
import type { ListOrder } from '../list-cursor.js';

/** The names one list request may ask for (a client sends fewer when its URL would pass the header limit). */
const MAX_NAMES = 500;

type TableRequest = FastifyRequest<{ Params: { tableId: string } }>;

/** The table list's order: oldest first unless `order=newest`; a list by prefix has its own (what matched). */
function listOrder(order: string | undefined, prefix: string | undefined): ListOrder {
  if (order === undefined) return 'oldest';
  if (!(LIST_ORDERS as readonly string[]).includes(order)) {
    throw badRequest('invalid_query', `order must be one of ${LIST_ORDERS.join(', ')}; got "${order}".`, {
      parameter: 'order',
    });
  }
  if (prefix !== undefined) {
    throw badRequest(
      'invalid_query',
      'order does not go with prefix: a list by prefix is ordered by the name or id that matched.',
      { parameter: 'order' },
    );
  }
  return order as ListOrder;
}

export function tableRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/api/tables', async (request: FastifyRequest<{ Querystring: Query }>) => {
    const caller = requireSession(await callerOf(ctx, request));
    rejectUnknownParams(request.query, ['state', 'name', 'prefix', 'limit', 'cursor', 'total', 'order']);
    const state = stringParam(request.query, 'state');
    // The tables whose name (any case) or id starts with it, ordered by that: what TAB completion asks.
    const prefix = stringParam(request.query, 'prefix');
    // Repeated, the tables holding any of the names: how `gds plan` finds who holds its models' names.
    const names = repeatedStringParam(request.query, 'name', MAX_NAMES);
    if (state !== undefined && !(LIFECYCLE_STATES as readonly string[]).includes(state)) {
      throw badRequest(
        'invalid_query',
        `state must be one of ${LIFECYCLE_STATES.join(', ')}; got "${state}".`,
        {
          parameter: 'state',
        },
      );
    }
    // An extension: newest first (`order=newest`), how TAB finds the newest tables' jobs at any size.
    const order = listOrder(stringParam(request.query, 'order'), prefix);
    const cursor = stringParam(request.query, 'cursor');
    const withTotal = booleanParam(request.query, 'total', true);
    // Without limit or cursor, every table in one answer (as before paging); with either, pages of at most 1,000.
    const paged = cursor !== undefined || request.query.limit !== undefined;
    const limit = paged ? intParam(request.query, 'limit', 1, 1000, 100) : undefined;
    const query = {
      workspaceId: caller.workspaceId,
      state,
      names,
      environments: visibleEnvironments(caller),
      limit,
      prefix,
      order,
      ...(cursor === undefined
        ? {}
        : prefix === undefined
          ? { after: decodeListCursor(cursor, order) }
          : { afterMatch: decodeMatchCursor(cursor) }),
    };
    const { tables, next } = await listTablePage(ctx.db, query);
    const rows = tables.map(({ gateMode, ...t }) => ({ ...t, gate: gateMode }));
    if (!paged) return { tables: rows };
    return {
      tables: rows,
      nextCursor:
        next === null
          ? null
          : encodeListCursor(order === 'newest' && 'createdAt' in next ? { ...next, order } : next),
      ...(cursor === undefined && withTotal
        ? { total: next === null ? rows.length : await countTables(ctx.db, query) }
        : {}),
    };
  });

  app.get('/api/tables/:tableId/status', async (request: TableRequest) => {
    const caller = requireSession(await callerOf(ctx, request));
    const table = await loadTableInScope(ctx.db, caller, request.params.tableId);
    const jobs = await activeJobs(ctx.db, table.id);
    return {
      id: table.id,
      governanceId: table.governanceId,
      name: table.name,
      mode: table.mode,
      state: table.state,
      gate: table.gateMode,
      environmentLabel: table.environmentLabel,
      source: table.source,
      project: table.project,
      definitionVersion: table.definitionVersion,
      gate1Version: table.gate1Version,
      dataVersion: table.dataVersion,
      contractVersion: table.contractVersion,
      certification: await latestCertification(ctx.db, table.id),
      // A CERTIFIED table's view, published again here when a warehouse rebuild dropped it.
      certifiedView:
        table.state === 'CERTIFIED'
          ? await ctx.db.transaction((tx) =>
              repairCertifiedView(tx, table, { clock: ctx.clock, userId: caller.userId, via: 'status' }),
            )
          : null,
      schemaDrift: await schemaDrift(ctx.db, table),
      openRecertificationRequests: await countRequests(ctx.db, caller.workspaceId, { tableId: table.id }),
      activeJobs: jobs.map((j) => ({ id: j.id, type: j.type, status: j.status, createdAt: j.createdAt })),
    };
  });

  app.get('/api/tables/:tableId/ddl', async (request: TableRequest) => {
    const caller = requireSession(await callerOf(ctx, request));
    const table = await loadTableInScope(ctx.db, caller, request.params.tableId);
    return {
      tableId: table.id,
      name: table.name,
      mode: table.mode,
      state: table.state,
      fileName: `${slugOf(table.name) || table.id}.sql`,
      ddl: tableDdl(table),
      columns: table.columns.map((c) => c.name),
    };
  });

  // Who may not delete the table (§7.3: its owner or a workspace admin) is refused before the body too;
  // a Mode B table (400) is the route's, after that.
  const deleting = guardBeforeBody(requireSession, async (context, caller, tableId) => {
    const table = await loadTableInScope(context.db, caller, tableId);
    await refuseForbiddenTrigger(context.db, deletion(context, caller, table));
  });
  app.delete(
    '/api/tables/:tableId',
    deleting,
    async (request: FastifyRequest<{ Params: { tableId: string }; Querystring: Query }>) => {
      const caller = requireSession(await callerOf(ctx, request));
      return governedTransaction(ctx.db, ctx.clock, async (tx) => {
        // The row's lock: an adoption by another project commits before this reads the owner, or waits.
        const table = await loadTableInScope(tx, caller, request.params.tableId, { lock: true });
        const result = await applyTrigger(tx, deletion(ctx, caller, table));
        // After the caller's right is checked; a refusal here rolls the transaction back.
        rejectUnknownParams(request.query, ['project']);
        // `gds apply --prune` deletes only its project's tables, checked under the table's transaction.
        checkOwner(table, projectParam(request.query));
        const deletedAt = new Date(ctx.clock()).toISOString();
        for (const effect of result.effects) {
          if (effect.type !== 'soft_delete') throw new Error(`delete: unexpected effect ${effect.type}`);
          await tx.query(
            'UPDATE gds.tables SET active = false, deleted_at = $2, updated_at = $2 WHERE id = $1',
            [table.id, deletedAt],
          );
          // Nothing is left to act on: its open requests are closed and its gate jobs will not run.
          await dismissRequestsOfDeletedTable(tx, ctx.clock, { table, actor: caller.userId });
          const cancelled = await cancelTableJobs(tx, table.id, ctx.clock);
          await recordAudits(
            tx,
            ctx.clock,
            cancelled.map((job) => ({
              workspaceId: caller.workspaceId,
              userId: caller.userId,
              tableId: table.id,
              environmentLabel: table.environmentLabel,
              gateMode: table.gateMode,
              action: 'GATE_JOB_CANCELLED',
              resource: 'gate_job',
              details: { jobId: job.id, type: job.type, from: job.from, reason: 'table deleted' },
            })),
          );
        }
        return { id: table.id, governanceId: table.governanceId, state: result.next, deletedAt };
      });
    },
  );

  // The project that owns a table: `gds apply --adopt` takes a table over, and a table recorded under the id
  // an earlier gds derived for the project gets the current one. `previous` is what the caller saw:
  // compare-and-set.
  // Who may not replace the table's definition may not adopt it either: refused before the body too.
  const adopting = guardBeforeBody(requireSession, async (context, caller, tableId) => {
    const refusal = replaceRefusal(caller, await loadTableInScope(context.db, caller, tableId));
    if (refusal) throw refusal;
  });
  app.put('/api/tables/:tableId/project', adopting, async (request: TableRequest) => {
    const caller = requireSession(await callerOf(ctx, request));
    return governedTransaction(ctx.db, ctx.clock, async (tx) => {
      const table = await loadTable(tx, caller.workspaceId, request.params.tableId, { lock: true });
      requireEnvironment(caller, table.environmentLabel, table.id);
      const refusal = replaceRefusal(caller, table);
      if (refusal) throw refusal;
      const { project, previous, reason } = readProjectBody(request.body);
      if (table.project === project) return { tableId: table.id, project, previous: project, changed: false };
      if (table.project !== previous) {
        throw new HttpError(
          409,
          'project_changed',
          `Table ${table.name} (${table.id}) is owned by ${table.project ?? 'no project'} now, not ${previous ?? 'no project'} as when you planned: plan again.`,
          { tableId: table.id, project: table.project },
        );
      }
      await tx.query('UPDATE gds.tables SET project = $2, updated_at = $3 WHERE id = $1', [
        table.id,
        project,
        new Date(ctx.clock()).toISOString(),
      ]);
      await recordAudit(tx, ctx.clock, {
        workspaceId: caller.workspaceId,
        userId: caller.userId,
        tableId: table.id,
        action: reason === 'migrate' ? 'TABLE_PROJECT_RECORDED' : 'TABLE_ADOPTED',
        resource: 'table',
        environmentLabel: table.environmentLabel,
        gateMode: table.gateMode,
        details: { from: table.project, to: project, reason },
      });
      return { tableId: table.id, project, previous: table.project, changed: true };
    });
  });
}

/** The delete trigger of `table` by `caller`. */
function deletion(ctx: Pick<AppContext, 'clock'>, caller: SessionCaller, table: TableRow): ApplyInput {
  return {
    table,
    trigger: 'deleted',
    context: {
      mode: table.mode,
      actor: { role: caller.role, isTableOwner: table.ownerId === caller.userId },
    },
    actor: caller,
    clock: ctx.clock,
    details: { source: table.source },
  };
}

function readProjectBody(body: unknown): {
  project: string;
  previous: string | null;
  reason: 'adopt' | 'migrate';
} {
  const fields = (typeof body === 'object' && body !== null && !Array.isArray(body) ? body : {}) as Record<
    string,
    unknown
  >;
  const unknown = Object.keys(fields).filter((k) => !['project', 'previous', 'reason'].includes(k));
  if (unknown.length > 0)
    throw badRequest('invalid_request', `Unknown fields: ${unknown.join(', ')}.`, { unknown });
  const { project, previous, reason = 'adopt' } = fields;
  if (typeof project !== 'string' || project === '')
    throw badRequest('invalid_request', 'project is required: the id of the project taking the table.', {
      field: 'project',
    });
  if (previous !== null && typeof previous !== 'string')
    throw badRequest('invalid_request', 'previous is required: the project you saw, or null for none.', {
      field: 'previous',
    });
  if (reason !== 'adopt' && reason !== 'migrate')
    throw badRequest('invalid_request', 'reason is adopt or migrate.', { field: 'reason' });
  return {
    project: checkProjectId(project, 'project'),
    previous: previous === null ? null : checkProjectId(previous, 'previous'),
    reason,
  };
}
