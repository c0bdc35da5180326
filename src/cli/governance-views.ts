// How the governance commands show tables, status and registrations to a person (human mode only;
// --json writes the service's objects as they are).
import type { Column } from './output-table.js';
import type { Output } from './output.js';
import type { Segment } from './segment.js';
import type { Connector } from '../client/areas/connectors.js';
import type { RecertificationRequest } from '../client/areas/recertification.js';
import type { JobSummary, TableListRow, TableStatus } from '../client/areas/tables.js';
import type { PushOutcome } from '../services/artifacts.js';
import type { RecertifyOutcome } from '../services/recertification.js';
import { printPreview } from './write-preview.js';
import type { RegistrationResult } from '../contract/types.js';
import { describeSignalDetails } from '../core/signal-details.js';

export const tableColumns: ReadonlyArray<Column<TableListRow>> = [
  { header: 'Id', kind: 'id', value: (t) => t.id },
  { header: 'Name', kind: 'name', value: (t) => t.name },
  { header: 'Mode', kind: 'version', value: (t) => t.mode },
  { header: 'State', kind: 'state', value: (t) => t.state },
  { header: 'Gate', kind: 'version', value: (t) => t.gate },
  { header: 'Env', kind: 'version', value: (t) => t.environmentLabel },
];

export const connectorColumns: ReadonlyArray<Column<Connector>> = [
  { header: 'Id', kind: 'id', value: (c) => c.id },
  { header: 'Name', kind: 'name', value: (c) => c.name },
  { header: 'Type', value: (c) => c.type },
  { header: 'Status', kind: 'state', value: (c) => c.status },
  { header: 'Env', kind: 'version', value: (c) => c.environmentLabel },
];

export const requestColumns: ReadonlyArray<Column<RecertificationRequest>> = [
  { header: 'Id', kind: 'id', value: (r) => r.id },
  { header: 'Table', kind: 'name', value: (r) => r.tableName },
  { header: 'Table id', kind: 'id', value: (r) => r.tableId },
  { header: 'Cause', kind: 'what', value: (r) => r.cause },
  { header: 'Env', kind: 'version', value: (r) => r.environmentLabel },
  { header: 'Status', kind: 'state', value: (r) => r.status },
  { header: 'Signals', kind: 'version', value: (r) => String(r.count ?? 1) },
  { header: 'Opened', kind: 'time', value: (r) => r.createdAt },
  { header: 'Last seen', kind: 'time', value: (r) => r.lastSeenAt ?? r.createdAt },
  { header: 'Latest', value: (r) => describeSignalDetails(r.signals?.at(-1)?.details ?? r.details) },
  {
    header: 'Resolved by',
    kind: 'version',
    value: (r) =>
      r.resolvedVersion === null || r.resolvedVersion === undefined ? '' : `v${r.resolvedVersion}`,
  },
];

export const outcomeColumns: ReadonlyArray<Column<RecertifyOutcome>> = [
  // The relation's schema when the signal named one: two rebuilt relations of one name are told apart.
  { header: 'Table', kind: 'name', value: (o) => (o.schema ? `${o.schema}.${o.table}` : o.table) },
  { header: 'Outcome', kind: 'state', value: (o) => o.outcome },
  { header: 'Drift', kind: 'version', value: (o) => (o.driftDetected ? 'yes' : 'no') },
  {
    header: 'Certified view',
    kind: 'text',
    value: (o) => (o.certifiedView ? describeViewHealth(o.certifiedView) : '-'),
  },
];

type ViewStatus = NonNullable<TableStatus['certifiedView']>;

/** A certified view's health in a few words: `published v3`, `missing, published again v3`, `columns differ`. */
export function describeViewHealth(view: ViewStatus): string {
  const version = view.version === null ? '' : ` v${view.version}`;
  if (view.republished) return `missing, published again${version}`;
  if (view.health === 'published') return `published${version}`;
  return view.health === 'missing' ? 'missing' : 'columns differ';
}

export function describeJobs(jobs: readonly JobSummary[]): string {
  if (jobs.length === 0) return 'none active';
  return jobs.map((j) => `${j.id} ${j.type} ${j.status}`).join('; ');
}

function describeDrift(drift: TableStatus['schemaDrift']): string {
  if (!drift.checked) return 'not checked (no warehouse object)';
  if (drift.objectMissing) return 'the warehouse object is missing';
  if (!drift.drifted) return 'none';
  const parts = [
    drift.added.length > 0 ? `added ${drift.added.join(', ')}` : '',
    drift.removed.length > 0 ? `removed ${drift.removed.join(', ')}` : '',
    drift.typeChanged.length > 0
      ? `type changed ${drift.typeChanged.map((c) => `${c.column} (${c.registered} -> ${c.warehouse})`).join(', ')}`
      : '',
  ];
  return parts.filter((p) => p !== '').join('; ');
}

export function printStatus(out: Output, status: TableStatus): void {
  const certification = status.certification;
  const rows: Array<[string, Segment]> = [
    ['Table', `${status.name} (${status.id})`],
    ['Governance id', status.governanceId],
    ['Mode', `${status.mode}, gate ${status.gate}, environment ${status.environmentLabel}`],
    ['State', out.state(status.state)],
    ['Source', status.source ?? '-'],
    ...(status.project === undefined || status.project === null
      ? []
      : [['Project', status.project] as [string, Segment]]),
    [
      'Versions',
      `definition ${status.definitionVersion}, gate1 ${status.gate1Version}, data ${status.dataVersion}` +
        (status.contractVersion === undefined ? '' : `, contract ${status.contractVersion}`),
    ],
    // `12m ago` on a terminal, `at <ISO time>` piped
    [
      'Certified',
      describeCertification(certification, (iso) =>
        out.stdout.isTTY === true ? out.when(iso) : `at ${iso}`,
      ),
    ],
    ...(status.certifiedView
      ? [['Certified view', describeView(status.certifiedView, out)] as [string, Segment]]
      : []),
    ['Schema drift', describeDrift(status.schemaDrift)],
    ...(status.openRecertificationRequests
      ? [['Recertification', `${status.openRecertificationRequests} open request(s)`] as [string, Segment]]
      : []),
    ['Jobs', describeJobs(status.activeJobs)],
  ];
  const width = Math.max(...rows.map(([label]) => label.length + 2));
  for (const [label, value] of rows) out.printField(out.style('bold', `${label}:`.padEnd(width)), value);
}

/** `certified_dev.orders published v3`; when it is not (or was just published again), why. On a terminal
 *  the rebuild reads relative (`rebuilt 12m ago`); piped, the ISO time a script parses. */
function describeView(view: ViewStatus, out: Output): string {
  const words = `${view.name} ${describeViewHealth(view)}`;
  const told = view.health === 'published' ? words : `${words}: ${view.detail}`;
  if (!view.ungatedSince) return told;
  return out.stdout.isTTY === true
    ? `${told} (the relation was rebuilt ${out.when(view.ungatedSince)}: its rows have not been gated since)`
    : `${told} (the relation was rebuilt: its rows have not been gated since ${view.ungatedSince})`;
}

/** The latest contract version: a certification, or a restore (which asks for a new certification). */
function describeCertification(
  certification: TableStatus['certification'],
  when: (iso: string) => string,
): string {
  if (certification === null) return 'never';
  const person = certification.certifiedByEmail ?? certification.certifiedBy;
  const by = person === null ? '' : ` by ${person}`;
  if (certification.kind === 'RESTORE') {
    const from =
      certification.restoredFrom === null || certification.restoredFrom === undefined
        ? ''
        : ` from v${certification.restoredFrom}`;
    return `v${certification.version} restored${from}${by} ${when(certification.certifiedAt)} (recertification requested)`;
  }
  return `v${certification.version} ${when(certification.certifiedAt)}${by}`;
}

export function printRegistration(out: Output, result: RegistrationResult, verb: string): void {
  out.printField(
    `${verb} ${result.governanceId}`,
    ...(result.state === undefined ? [] : [' (', out.state(result.state), ')']),
  );
  out.printField(`Tracking: ${result.trackingUrl}`);
  out.printField(`Status:   baseline job ${result.job.id} `, out.state(result.job.status));
  if (result.columns !== undefined) {
    const { added, removed } = result.columns;
    out.printField(`Columns:  added ${added.join(', ') || 'none'}; removed ${removed.join(', ') || 'none'}`);
  }
}

/** `push` that sent nothing: the definition was already held, or `--dry-run`. */
export function printPushPreview(
  out: Output,
  outcome: Exclude<PushOutcome, { kind: 'pushed' }>,
  dryRun: boolean,
  trackingUrl?: string,
  /** The table as --replace named it (docs/output.md); else its governance id. */
  named?: string,
): void {
  if (outcome.kind === 'preview') {
    if (outcome.unchecked !== undefined)
      out.warn(
        `The service was not reached (${outcome.unchecked}): this is the file's diff alone; whether the service would take the push was not asked.`,
      );
    printPreview(out, { changed: true, diff: outcome.diff }, '');
    return;
  }
  const { held } = outcome;
  const id = held.governanceId;
  const version = held.definitionVersion === undefined ? '' : ` definition v${held.definitionVersion}`;
  const state = held.state === undefined ? '' : ` (${held.state})`;
  const noChange = `No change: ${named ?? id} is already${version || ' this definition'}${state}.`;
  if (dryRun) printPreview(out, { changed: false, diff: '' }, noChange);
  else if (out.json) {
    out.record({
      governanceId: id,
      tableId: held.tableId,
      definitionVersion: held.definitionVersion,
      state: held.state,
      ...(trackingUrl === undefined ? {} : { trackingUrl }),
      changed: false,
    });
  } else {
    out.success(noChange);
    if (trackingUrl !== undefined) out.printField(`Tracking: ${trackingUrl}`);
  }
}
