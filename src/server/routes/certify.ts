// Certify (§4.6, §7.2) and reject (`gds reject --reason`): the two ways out of PENDING_REVIEW.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CertifyResponse } from '../../contract/types.js';
import { MAX_NOTE_CHARS } from '../../core/text-bounds.js';
import {
  requireCertifier,
  loadTableInScope,
  requireEnvironment,
  requireTokenTableWrite,
  personOfRole,
  tableInScope,
} from '../certification/access.js';
import {
  certificationChecks,
  certify,
  parseCertifyBody,
  requireReviewedSubmission,
} from '../certification/certify.js';
import { loadGateTable } from '../gates/table.js';
import { latestSubmitProof } from '../gates/proofs.js';
import type { AppContext } from '../context.js';
import { callerOf, guardBeforeBody } from '../context.js';
import { badRequest } from '../errors.js';
import { checkTextLength } from '../input-rule.js';
import { applyTrigger, governedTransaction } from '../governance/engine.js';

type TableRoute = { Params: { tableId: string }; Body: unknown };
type TableRequest = FastifyRequest<TableRoute>;

export function certifyRoutes(app: FastifyInstance, ctx: AppContext): void {
  // A token's write permission is the table's too: refused, like the table's absence, before the body.
  const certifier = guardBeforeBody(requireCertifier, async (context, caller, tableId) =>
    requireTokenTableWrite(context.db, caller, await loadTableInScope(context.db, caller, tableId)),
  );
  app.post<TableRoute>(
    '/api/tables/:tableId/semantic-contract/certify',
    certifier,
    async (request: TableRequest) => {
      const caller = requireCertifier(await callerOf(ctx, request));
      // The submission the checks review, read before the table they scan: one filed since is not what they
      // checked, and the transaction below refuses to certify it (compared only, never answered).
      const reviewed = await latestSubmitProof(ctx.db, request.params.tableId);
      // The checks scan the data outside the certify transaction, once the caller may certify this table.
      const scanned = await loadGateTable(ctx.db, caller.workspaceId, request.params.tableId);
      requireEnvironment(caller, scanned.environmentLabel, scanned.id);
      await requireTokenTableWrite(ctx.db, caller, scanned);
      const body = parseCertifyBody(request.body);
      const live = await certificationChecks(ctx.db, ctx.clock, scanned);
      const response: CertifyResponse = await governedTransaction(ctx.db, ctx.clock, async (tx) => {
        // Locked, as every writer of the table's state: a reject, submit or certify running beside this one
        // is decided on first, and this one reads the state it left.
        const table = await loadTableInScope(tx, caller, request.params.tableId, { lock: true });
        await requireTokenTableWrite(tx, caller, table);
        if (body.reviewedProofId !== undefined)
          await requireReviewedSubmission(tx, table, body.reviewedProofId);
        // No checks ran (the table was not waiting for review when scanned): any submission now is unchecked.
        const reviewedProofId = live === null ? null : (reviewed?.id ?? null);
        return { contract: await certify(tx, ctx.clock, { table, caller, body, live, reviewedProofId }) };
      });
      return response;
    },
  );

  const rejecter = personOfRole('STEWARD', 'reject a table');
  const rejecting = guardBeforeBody(rejecter, tableInScope);
  app.post('/api/tables/:tableId/reject', rejecting, async (request: TableRequest) => {
    const caller = rejecter(await callerOf(ctx, request));
    const reason = (request.body as { reason?: unknown } | undefined)?.reason;
    if (typeof reason !== 'string' || reason.trim() === '') {
      throw badRequest(
        'reason_required',
        'Say why the table is rejected: send {"reason": "<text>"} (--reason).',
        {
          field: 'reason',
        },
      );
    }
    // §3: the reason is recorded in the audit trail, whole.
    checkTextLength('reason', reason, MAX_NOTE_CHARS);
    return governedTransaction(ctx.db, ctx.clock, async (tx) => {
      const table = await loadTableInScope(tx, caller, request.params.tableId, { lock: true });
      const { next } = await applyTrigger(tx, {
        table,
        trigger: 'rejected',
        context: { mode: table.mode, tableName: table.name },
        actor: caller,
        clock: ctx.clock,
        details: { reason },
      });
      return { tableId: table.id, state: next };
    });
  });
}
