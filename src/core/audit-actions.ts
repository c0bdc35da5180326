// Audit actions the service is known to write (the spec does not list them all, so this list only
// suggests: `--event-type table_certified` finds nothing, and gds asks "did you mean TABLE_CERTIFIED?").
import { closest } from './did-you-mean.js';

export const KNOWN_AUDIT_ACTIONS: readonly string[] = [
  'BASELINE_VERIFIED',
  'BUNDLE_IMPORTED',
  'CERTIFICATION_BLOCKED',
  'CERTIFICATION_REFUSED',
  'CONTRACT_INTENT_SET',
  'CONTRACT_VERSION_RESTORED',
  'DEFINITION_REFUSED',
  'DEFINITION_REGISTERED',
  'DEFINITION_REPLACED',
  'DEFINITION_REPLACE_REFUSED',
  'DELETE_REFUSED',
  'GATE_JOB_CANCELLED',
  'GATE_JOB_ENQUEUED',
  'GATE_JOB_REFUSED',
  'RECERTIFICATION_DISMISSED',
  'RECERTIFICATION_REQUESTED',
  'RECORDS_BULK_UPDATED',
  'RECORDS_IMPORTED',
  'RECORD_CREATED',
  'RECORD_DELETED',
  'RECORD_UPDATED',
  'REJECTION_REFUSED',
  'STEWARD_NOTIFIED',
  'TABLE_CERTIFIED',
  'TABLE_DELETED',
  'TABLE_PROMOTED',
  'TABLE_REJECTED',
  'VERSION_RESTORE_REFUSED',
  'WORKSPACE_CONFIG_CHANGED',
];

/** The known action a given --event-type most likely meant, when it is not one itself. */
export function nearAuditAction(given: string): string | undefined {
  if (KNOWN_AUDIT_ACTIONS.includes(given)) return undefined;
  const near = closest(given, KNOWN_AUDIT_ACTIONS);
  return near === given ? undefined : near;
}
