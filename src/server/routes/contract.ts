// Contract intent (`gds contract set-intent`): decision class, consumer classes and structured grain.
// Every field not given carries forward unchanged.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Schema } from '../../contract/types.js';
import { roleAtLeast } from '../../core/scopes.js';
import { recordAudit } from '../audit.js';
import { loadTableInScope, requireEnvironment, requirePerson, requireRole } from '../certification/access.js';
import type { ContractFields } from '../certification/contracts.js';
import {
  fieldsOf,
  findContract,
  liveContract,
  sameFields,
  updateContract,
} from '../certification/contracts.js';
import type { AppContext } from '../context.js';
import { callerOf, guardBeforeBody } from '../context.js';
import { parseBody } from '../contract.js';
import { badRequest, notFound } from '../errors.js';
import type { SessionCaller } from '../auth/caller.js';
import { checkOwner, projectParam } from '../governance/definitions.js';
import type { TableRow } from '../governance/tables.js';
import { checkVersion, expectedVersion } from '../governance/precondition.js';
import { loadTable } from '../governance/tables.js';

type TableRequest = FastifyRequest<{ Params: { tableId: string }; Body: unknown }>;

export function contractRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.patch(
    '/api/tables/:tableId/semantic-contract',
    guardBeforeBody(requirePerson, checkIntentCaller),
    async (request: TableRequest) => {
      const caller = requirePerson(await callerOf(ctx, request));
      const body = parseBody<Schema<'ContractIntentRequest'>>('ContractIntentRequest', request.body);
      return setIntent(
        ctx,
        caller,
        request.params.tableId,
        body,
        () => expectedVersion(request),
        projectParam(request.query),
      );
    },
  );

  app.get('/api/tables/:tableId/semantic-contract', async (request: TableRequest) => {
    const caller = requirePerson(await callerOf(ctx, request));
    const table = await loadTableInScope(ctx.db, caller, request.params.tableId);
    const found = await findContract(ctx.db, table.id);
    if (!found) {
      throw notFound(
        'contract_not_found',
        `Table ${table.name} has no contract yet; gds contract set-intent ${table.id} creates it.`,
        { tableId: table.id },
      );
    }
    const { tableId: _tableId, updatedAt: _updatedAt, ...contract } = found;
    const response: Schema<'LiveContractResponse'> = {
      contract: { ...contract, status: table.state },
      maySetIntent: maySetIntent(caller, table),
    };
    return response;
  });
}

/** The intent of a table's contract is set by the table's owner, or by a STEWARD and above. */
export function maySetIntent(caller: SessionCaller, table: Pick<TableRow, 'ownerId'>): boolean {
  return table.ownerId === caller.userId || roleAtLeast(caller.role, 'STEWARD');
}

/** Authorizes a contract intent write before its body is read (and again in setIntent, on the row it locks). */
export async function checkIntentCaller(
  ctx: AppContext,
  caller: SessionCaller,
  tableId: string,
): Promise<void> {
  const target = await loadTableInScope(ctx.db, caller, tableId);
  if (!maySetIntent(caller, target))
    requireRole(caller, 'STEWARD', "set the intent of a table you don't own");
}

/**
 * Sets the contract intent (PATCH .../semantic-contract, and each item of POST /api/artifacts/batch): every
 * field not given carries forward; nothing when nothing changes; 412 when `expectedOf()` is given and is not
 * the contract's revision; 409 `owned_elsewhere` when `project` is given and the table is not that project's.
 */
export async function setIntent(
  ctx: AppContext,
  caller: SessionCaller,
  tableId: string,
  body: Schema<'ContractIntentRequest'>,
  expectedOf: () => number | undefined,
  project?: string,
): Promise<Schema<'LiveContractResponse'>> {
  // A grain is set with both its type and one or more key columns, or cleared with null and [].
  const keys = body.grainKeyColumns;
  if (
    (body.grainType === undefined) !== (keys === undefined) ||
    (body.grainType === null) !== (keys !== undefined && keys.length === 0)
  ) {
    throw badRequest(
      'grain_incomplete',
      'A structured grain needs both grainType and grainKeyColumns (--grain-type with --grain-key); grainType null with grainKeyColumns [] clears it.',
      { fields: ['grainType', 'grainKeyColumns'] },
    );
  }
  const expected = expectedOf();
  return ctx.db.transaction(async (tx): Promise<Schema<'LiveContractResponse'>> => {
    // The table's row lock: parallel writes of one table's contract compare and write in turn.
    const table = await loadTable(tx, caller.workspaceId, tableId, { lock: true });
    if (!maySetIntent(caller, table)) {
      requireRole(caller, 'STEWARD', "set the intent of a table you don't own");
    }
    requireEnvironment(caller, table.environmentLabel);
    checkOwner(table, project);
    const registered = new Set(table.columns.map((c) => c.name));
    const unknown = (body.grainKeyColumns ?? []).filter((c) => !registered.has(c));
    if (unknown.length > 0) {
      throw badRequest(
        'unknown_grain_columns',
        `Grain key columns must be registered columns of ${table.name}; not registered: ${unknown.join(', ')}.`,
        { unknown, columns: [...registered] },
      );
    }
    const before = await liveContract(tx, ctx.clock, table);
    const fields: ContractFields = {
      ...fieldsOf(before),
      ...(body.intent === undefined ? {} : { intent: body.intent }),
      ...(body.allowedConsumers === undefined ? {} : { allowedConsumers: body.allowedConsumers }),
      ...(body.grainType === undefined ? {} : { grainType: body.grainType }),
      ...(body.grainKeyColumns === undefined ? {} : { grainKeyColumns: body.grainKeyColumns }),
      ...(body.grain === undefined ? {} : { grain: body.grain }),
      ...(body.meaning === undefined ? {} : { meaning: body.meaning }),
    };
    if (sameFields(fields, fieldsOf(before))) {
      const { tableId: _tableId, updatedAt: _updatedAt, ...contract } = before;
      return { contract: { ...contract, status: table.state }, changed: false };
    }
    checkVersion(
      `The contract of ${table.id}`,
      before.revision,
      expected,
      `Compare with gds contract set-intent ${table.id} … --dry-run and set it again.`,
    );
    const { contract: after, contractVersion } = await updateContract(
      tx,
      ctx.clock,
      table.id,
      fields,
      caller.userId,
    );
    await recordAudit(tx, ctx.clock, {
      workspaceId: caller.workspaceId,
      userId: caller.userId,
      tableId: table.id,
      action: 'CONTRACT_INTENT_SET',
      resource: 'semantic_contract',
      environmentLabel: table.environmentLabel,
      gateMode: table.gateMode,
      details: {
        changed: Object.keys(body),
        before: fieldsOf(before),
        after: fieldsOf(after),
        ...(contractVersion ? { contractVersion } : {}),
      },
    });
    const { tableId: _tableId, updatedAt: _updatedAt, ...contract } = after;
    return { contract: { ...contract, status: table.state }, changed: true };
  });
}
