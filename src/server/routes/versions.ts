// Contract versions (`gds versions list|restore`): the certification history, and restoring an
// earlier version as a new forward version that files a recertification request.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Schema } from '../../contract/types.js';
import { MAX_NOTE_CHARS } from '../../core/text-bounds.js';
import { loadTableInScope, personOfRole, requirePerson, tableInScope } from '../certification/access.js';
import {
  appendVersion,
  type ContractVersionMove,
  getVersion,
  listVersions,
  liveContract,
  updateContract,
} from '../certification/contracts.js';
import type { AppContext } from '../context.js';
import { callerOf, guardBeforeBody } from '../context.js';
import { parseBody } from '../contract.js';
import { badRequest } from '../errors.js';
import { checkTextLength } from '../input-rule.js';
import { recordAudit } from '../audit.js';
import type { AuditInput } from '../audit.js';
import { applyTrigger, fileRecertificationRequest, governedTransaction } from '../governance/engine.js';

type TableRequest = FastifyRequest<{ Params: { tableId: string }; Body: unknown }>;

export function versionRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/api/tables/:tableId/versions', async (request: TableRequest) => {
    const caller = requirePerson(await callerOf(ctx, request));
    const table = await loadTableInScope(ctx.db, caller, request.params.tableId);
    const list: Schema<'ContractVersionList'> = {
      tableId: table.id,
      versions: await listVersions(ctx.db, table.id),
    };
    return list;
  });

  const restorer = personOfRole('STEWARD', 'restore a contract version');
  app.post(
    '/api/tables/:tableId/versions/restore',
    guardBeforeBody(restorer, tableInScope),
    async (request: TableRequest) => {
      const caller = restorer(await callerOf(ctx, request));
      const body = parseBody<Schema<'RestoreRequest'>>('RestoreRequest', request.body);
      const reason = body.reason.trim();
      if (reason === '') {
        throw badRequest(
          'reason_required',
          'Say why the version is restored: send {"reason": "<text>"} (--reason).',
          { field: 'reason' },
        );
      }
      checkTextLength('reason', reason, MAX_NOTE_CHARS);
      const result: Schema<'RestoreResult'> = await governedTransaction(ctx.db, ctx.clock, async (tx) => {
        const table = await loadTableInScope(tx, caller, request.params.tableId, { lock: true });
        const restored = await getVersion(tx, table.id, body.to);
        // Written once the version is restored, with the contract revision's move if the restore made one.
        const audits: AuditInput[] = [];
        const { next, effects } = await applyTrigger(tx, {
          audits,
          table,
          trigger: 'version_restored',
          context: {
            mode: table.mode,
            tableName: table.name,
            environment: {
              table: table.environmentLabel,
              version: restored.environmentLabel,
              ...(body.env === undefined ? {} : { asserted: body.env }),
            },
          },
          actor: caller,
          clock: ctx.clock,
          details: { reason, restoredFrom: restored.version },
        });
        let version = restored;
        let contractVersion: ContractVersionMove | undefined;
        for (const effect of effects) {
          if (effect.type !== 'write_restored_version') continue;
          await liveContract(tx, ctx.clock, table);
          version = await appendVersion(tx, {
            tableId: table.id,
            kind: 'RESTORE',
            environmentLabel: table.environmentLabel,
            contract: restored.contract,
            at: new Date(ctx.clock()).toISOString(),
            by: caller.userId,
            restoredFrom: restored.version,
            reason,
          });
          ({ contractVersion } = await updateContract(
            tx,
            ctx.clock,
            table.id,
            restored.contract,
            caller.userId,
          ));
        }
        // The restore's own entry before the request it files (whose entry RECERTIFICATION_REQUESTED is
        // written as it is filed): the log reads cause, then effect.
        for (const entry of audits) {
          await recordAudit(tx, ctx.clock, {
            ...entry,
            details: { ...entry.details, ...(contractVersion ? { contractVersion } : {}) },
          });
        }
        let recertificationRequestId = '';
        for (const effect of effects) {
          if (effect.type !== 'file_recertification') continue;
          recertificationRequestId = await fileRecertificationRequest(tx, {
            tableId: table.id,
            cause: effect.cause,
            details: { reason, restoredFrom: restored.version, version: version.version },
            actor: caller,
            clock: ctx.clock,
          });
        }
        return { tableId: table.id, state: next, version, recertificationRequestId };
      });
      return result;
    },
  );
}
