// `gds review` on a terminal: the queue's columns, and the walk through it table by table, asking the
// steward what to do with each (certify, reject with a reason, skip, quit).
import { debugLog } from '../auth/debug-log.js';
import { ApiError, refusesField } from '../client/errors.js';
import { CliError } from '../core/errors.js';
import { onOneLine } from '../core/terminal-text.js';
import type { ApiClient } from '../client/index.js';
import type { QueueEntry } from '../services/review.js';
import { changesSummary, proofSummary, requestsSummary } from '../services/review.js';
import type { CertifyResponse } from '../contract/types.js';
import { certifyTable, rejectTable, requireInteractiveSession } from '../services/certification.js';
import type { Column } from './output-table.js';
import type { Output } from './output.js';
import { select, text } from './prompt.js';
import type { Session } from './session.js';

export const queueColumns: ReadonlyArray<Column<QueueEntry>> = [
  { header: 'Table', kind: 'name', value: (e) => e.tableName },
  { header: 'Id', kind: 'id', value: (e) => e.tableId },
  { header: 'Env', kind: 'version', value: (e) => e.environmentLabel },
  { header: 'Proof', value: proofSummary },
  { header: 'Changed', value: changesSummary },
  { header: 'Requests', value: requestsSummary },
  { header: 'Submitted by', kind: 'who', value: (e) => e.submittedBy.email ?? e.submittedBy.userId ?? '' },
  { header: 'Submitted', kind: 'time', value: (e) => e.createdAt },
];

type Decision = 'certify' | 'reject' | 'skip' | 'quit';

const CHOICES = [
  { value: 'certify' as const, name: 'Certify', description: 'Certify it now (needs a browser sign-in).' },
  { value: 'reject' as const, name: 'Reject', description: 'Send it back to QUARANTINED, saying why.' },
  { value: 'skip' as const, name: 'Skip', description: 'Leave it waiting; go to the next table.' },
  { value: 'quit' as const, name: 'Quit', description: 'Stop here; the rest stays waiting.' },
];

/** Shows each waiting table and carries out the steward's decision on it; a refused decision is said and skipped. */
export async function walkQueue(
  out: Output,
  client: ApiClient,
  session: Session,
  pages: AsyncIterable<{ rows: QueueEntry[] }>,
): Promise<void> {
  let seen = 0;
  let decided = 0;
  const service = { takesReviewedProofId: true };
  walk: for await (const page of pages) {
    for (const entry of page.rows) {
      seen += 1;
      out.print('');
      out.printField(
        out.style('bold', `${entry.tableName}`),
        ` (${entry.tableId}, ${entry.environmentLabel})`,
      );
      out.printField(`  Proof:     ${proofSummary(entry)}`);
      out.printField(`  Changed:   ${changesSummary(entry)}`);
      out.printField(`  Requests:  ${requestsSummary(entry)}`);
      out.printField(
        `  Submitted: ${out.when(entry.createdAt)} by ${entry.submittedBy.email ?? entry.submittedBy.userId ?? 'someone'}`,
      );
      // The service's name on one line: on two, its second would read as a line of gds's own.
      const name = onOneLine(entry.tableName);
      const decision = await select<Decision>(`What about ${name}?`, CHOICES, { initial: 'skip' });
      if (decision === 'quit') break walk;
      if (decision === 'skip') continue;
      try {
        if (decision === 'certify') {
          if (session.credentials !== undefined) requireInteractiveSession(session.credentials);
          const certified = await certifyShown(client, entry, service);
          if ('currentProofId' in certified) {
            out.warn(submittedAgain(out, name, certified));
            continue;
          }
          const { contract } = certified;
          out.success(`Certified ${entry.tableName}: contract ${contract.id} ${contract.status}.`);
        } else {
          const reason = await text(`Why is ${name} rejected?`);
          const change = await rejectTable(client, entry.tableId, reason);
          out.success(`Rejected ${entry.tableName}: now ${change.state}.`);
        }
        decided += 1;
      } catch (error) {
        // A static token's certify is refused here, before any request, like the service's refusals.
        if (!(error instanceof ApiError) && !(error instanceof CliError)) throw error;
        if (error instanceof ApiError && error.code === 'submission_changed') {
          out.warn(submittedAgain(out, name, error.details));
          continue;
        }
        const next = error instanceof CliError && error.suggestion ? ` ${error.suggestion}` : '';
        out.warn(
          `${name} was not ${decision === 'certify' ? 'certified' : 'rejected'}: ${error.message}${next}`,
        );
      }
    }
  }
  if (seen === 0) out.info('Nothing is waiting for review.');
  else out.info(`${decided} of ${seen} decided.`);
}

/**
 * Certifies the submission shown (`entry.proof`), never one filed since: the service compares it (409
 * submission_changed). A service that refuses `reviewedProofId` as unknown (the spec's body has no such field)
 * is remembered for the walk; for it the queue's newest submission of the table is read and compared first,
 * and the table certified without the field only when it is the one shown.
 */
async function certifyShown(
  client: ApiClient,
  entry: QueueEntry,
  service: { takesReviewedProofId: boolean },
): Promise<CertifyResponse | { currentProofId: string | null; submittedAt: string }> {
  const shown = entry.proof?.id;
  if (shown === undefined) return certifyTable(client, entry.tableId, {});
  if (service.takesReviewedProofId) {
    try {
      return await certifyTable(client, entry.tableId, { reviewedProofId: shown });
    } catch (error) {
      if (!refusesField(error, 'reviewedProofId')) throw error;
      service.takesReviewedProofId = false;
      debugLog(
        "the service refuses certify's reviewedProofId: for the rest of this walk, each table's newest submission is read from the queue and compared before certifying without it",
      );
    }
  }
  // Absent from the queue, the table no longer waits for review: the service's certify says why.
  const newest = (await client.notifications.queue()).find((e) => e.tableId === entry.tableId);
  if (newest !== undefined && newest.proof?.id !== shown) {
    return { currentProofId: newest.proof?.id ?? null, submittedAt: newest.createdAt };
  }
  return certifyTable(client, entry.tableId, {});
}

/**
 * A certify refused because the table was submitted again after the walk showed it, on one line: the new
 * submission (the service's strings on one line) waits in the queue, after the pages this walk reads.
 */
function submittedAgain(out: Output, name: string, details: unknown): string {
  const { currentProofId, submittedAt } = (details ?? {}) as {
    currentProofId?: unknown;
    submittedAt?: unknown;
  };
  const newer = [
    typeof currentProofId === 'string' ? `proof ${onOneLine(currentProofId)}` : '',
    typeof submittedAt === 'string' && !Number.isNaN(Date.parse(submittedAt))
      ? `submitted ${out.when(submittedAt)}`
      : '',
  ].filter((part) => part !== '');
  const which = newer.length === 0 ? '' : ` (${newer.join(', ')})`;
  return `${name} was not certified: it was submitted again${which} after it was shown here. Review the new submission in the next gds review.`;
}
