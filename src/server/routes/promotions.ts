// Environment promotion and portable bundles (`gds env promote --to`, `--bundle-out`, `--bundle-in`).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Schema } from '../../contract/types.js';
import {
  loadTableInScope,
  requireEnvironment,
  requirePerson,
  tableInScope,
} from '../certification/access.js';
import type { Bundle } from '../certification/bundle.js';
import { openBundle, sealBundle } from '../certification/bundle.js';
import type { LandOutcome, PromotionResult } from '../certification/promotion.js';
import {
  bundleOf,
  bundleProject,
  heldDefinition,
  landBundle,
  notPromotable,
  promotedProject,
  targetConnector,
} from '../certification/promotion.js';
import type { AppContext } from '../context.js';
import { callerOf, guardBeforeBody } from '../context.js';
import { parseBody } from '../contract.js';
import { badRequest } from '../errors.js';
import { checkIds } from '../input-rule.js';
import { loadConnector, mayReplace } from '../governance/definitions.js';
import { expectedVersion } from '../governance/precondition.js';
import type { TableRow } from '../governance/tables.js';
import { loadTable } from '../governance/tables.js';
import type { Caller } from '../auth/caller.js';

type TableRequest = FastifyRequest<{ Params: { tableId: string }; Body: unknown }>;

export function promotionRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/api/tables/:tableId/bundle', async (request: TableRequest) => {
    const caller = requirePerson(await callerOf(ctx, request));
    const table = await loadTableInScope(ctx.db, caller, request.params.tableId);
    const bundle: Bundle = sealBundle(await bundleOf(ctx.db, table, new Date(ctx.clock()).toISOString()));
    return bundle;
  });

  app.get('/api/tables/:tableId/definition', async (request: TableRequest) => {
    const caller = requirePerson(await callerOf(ctx, request));
    const table = await loadTableInScope(ctx.db, caller, request.params.tableId);
    return heldDefinitionOf(caller, table);
  });

  app.post(
    '/api/tables/:tableId/promotions',
    guardBeforeBody(requirePerson, tableInScope),
    async (request: TableRequest, reply: FastifyReply) => {
      const caller = requirePerson(await callerOf(ctx, request));
      const table = await loadTable(ctx.db, caller.workspaceId, request.params.tableId);
      requireEnvironment(caller, table.environmentLabel);
      const body = parseBody<Schema<'PromotionRequest'>>('PromotionRequest', request.body);
      checkIds({ environmentLabel: body.to });
      if (body.to === table.environmentLabel) {
        throw badRequest(
          'same_environment',
          `Table ${table.name} is already in ${body.to}: promote it to another environment.`,
          { environmentLabel: body.to },
        );
      }
      const bundle = await bundleOf(ctx.db, table, new Date(ctx.clock()).toISOString());
      const connector = await targetConnector(ctx.db, caller, body.to, body.connectorId);
      const outcome = await landBundle(
        ctx,
        caller,
        bundle,
        connector,
        {
          action: 'TABLE_PROMOTED',
          details: { from: { tableId: table.id, environmentLabel: table.environmentLabel }, to: body.to },
        },
        {
          project: promotedProject(table, connector),
          replaceId: body.replaceId,
          dryRun: body.dryRun,
          expectedVersion: expectedVersion(request),
        },
      );
      return sendLanding(reply, outcome);
    },
  );

  app.post(
    '/api/bundles',
    guardBeforeBody(requirePerson),
    async (request: FastifyRequest<{ Body: unknown }>, reply: FastifyReply) => {
      const caller = requirePerson(await callerOf(ctx, request));
      const input = request.body;
      if (input === null || typeof input !== 'object' || Array.isArray(input)) {
        throw badRequest(
          'invalid_body',
          'Send a bundle (as exported by GET /api/tables/{id}/bundle) plus connectorId.',
        );
      }
      const { connectorId, replaceId, dryRun, ...sealed } = input as Record<string, unknown>;
      const bundle = openBundle(sealed);
      // A bundle is sealed by a digest anyone can compute: one made by hand may say what no export says.
      if (bundle.table.mode !== 'MODE_A') throw notPromotable(bundle.table);
      parseBody<Schema<'ImportBundleRequest'>>('ImportBundleRequest', input);
      const connector = await loadConnector(ctx.db, caller.workspaceId, String(connectorId));
      const outcome = await landBundle(
        ctx,
        caller,
        bundle,
        connector,
        { action: 'BUNDLE_IMPORTED', details: { bundleSha256: sealed.sha256, from: bundle.table } },
        {
          project: bundleProject(bundle.table, connector),
          replaceId: replaceId as string | undefined,
          dryRun: dryRun as boolean | undefined,
          expectedVersion: expectedVersion(request),
        },
      );
      return sendLanding(reply, outcome);
    },
  );
}

/** 202 for a landing that wrote, 200 for a preview or a target that already held it all. */
function sendLanding(reply: FastifyReply, outcome: LandOutcome): FastifyReply {
  if (outcome.kind === 'preview') {
    const preview: Schema<'PromotionPreview'> = { changed: outcome.changed, diff: outcome.diff };
    return reply.code(200).send(preview);
  }
  const result: PromotionResult = outcome.result;
  return reply.code(result.changed ? 202 : 200).send(result);
}

/** GET /api/tables/{tableId}/definition's answer (also each table's `definition` of GET /api/held-tables). */
export function heldDefinitionOf(
  caller: Caller,
  table: Pick<
    TableRow,
    | 'id'
    | 'governanceId'
    | 'name'
    | 'environmentLabel'
    | 'connectorId'
    | 'state'
    | 'definitionVersion'
    | 'mode'
    | 'source'
    | 'artifact'
    | 'columns'
    | 'ownerId'
  >,
): Schema<'HeldDefinition'> {
  return {
    tableId: table.id,
    governanceId: table.governanceId,
    name: table.name,
    environmentLabel: table.environmentLabel,
    connectorId: table.connectorId,
    state: table.state,
    definitionVersion: table.definitionVersion,
    mayReplace: mayReplace(caller, table),
    definition: heldDefinition(table),
  };
}
