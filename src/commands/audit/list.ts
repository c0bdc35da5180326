import { Flags } from '@oclif/core';
import { nearAuditAction } from '../../core/audit-actions.js';
import type { Column } from '../../cli/output-table.js';
import { ApiCommand } from '../../cli/api-command.js';
import type { AuditEntry } from '../../contract/types.js';
import { auditEntryPages, listAuditEntries } from '../../services/audit.js';
import { echoed } from '../../core/echo.js';
import { isCalendarDate, isoTimestamp } from '../../core/iso-timestamp.js';

const columns: ReadonlyArray<Column<AuditEntry>> = [
  { header: 'Time', kind: 'time', value: (e) => e.createdAt },
  { header: 'Action', kind: 'version', value: (e) => e.action },
  { header: 'Resource', value: (e) => e.resource },
  { header: 'Table', kind: 'id', value: (e) => e.tableId },
  { header: 'User', kind: 'who', value: (e) => e.userEmail || e.userId },
  { header: 'Env', kind: 'version', value: (e) => e.environmentLabel },
  { header: 'Gate', kind: 'version', value: (e) => e.gateModeAtEvaluation },
];

export default class AuditList extends ApiCommand<typeof AuditList> {
  static override pager = true;
  static override summary = 'Show the audit log of your workspace, newest first.';
  static override description =
    "Management plane: a MANAGEMENT token with workspace:read:audit, or any member's own sign-in. " +
    'One page by default (--limit, up to 200); --all follows every page and, under --json, writes each ' +
    'entry as one line as soon as it arrives (Ctrl-C stops with exit 130, every line written whole).';
  static override examples = [
    '<%= config.bin %> audit list',
    '<%= config.bin %> audit list --event-type TABLE_CERTIFIED --since 2026-01-01',
    '<%= config.bin %> audit list --all --json > audit.ndjson',
    '<%= config.bin %> audit list --event-type RECORD_CREATED --limit 200 --json',
  ];
  static override flags = {
    'event-type': Flags.string({
      description: 'Only entries of this action, exactly (e.g. TABLE_CERTIFIED).',
    }),
    since: Flags.custom<string>({
      description:
        'Only entries at or after this ISO-8601 time (a date alone means its midnight UTC, a time without an offset is UTC).',
      parse: async (input) => {
        // Read as the service reads it: a time without an offset is UTC, and 2026-02-30 is no day (JavaScript
        // alone would read the one in the local zone and the other as March 2).
        // ISO 8601's other spellings are taken as the same time: a space or t for T, z for Z, +0200 or +02 for
        // +02:00, and a month alone (2026-01) for its first day, as JavaScript read them before.
        const spelled = input
          .replace(/^(\d{4}-\d{2})$/, '$1-01')
          .replace(/^(\d{4}-\d{2}-\d{2})[ t](?=\d)/, '$1T')
          .replace(/z$/, 'Z')
          .replace(
            /(T[\d:.]+[+-]\d{2})(\d{2})?$/,
            (_, head: string, minutes?: string) => `${head}:${minutes ?? '00'}`,
          );
        const time = isoTimestamp(spelled);
        if (time !== undefined) return time;
        const form = 'an ISO-8601 date or time, e.g. 2026-01-31 or 2026-01-31T12:00:00Z';
        if (/^\d{4}-\d{2}-\d{2}/.test(input) && !isCalendarDate(input))
          throw new Error(`--since ${echoed(input)} is not a day of the calendar; give ${form}`);
        throw new Error(`${echoed(input)} is not an ISO-8601 time; give ${form}`);
      },
    })(),
    limit: Flags.integer({
      char: 'L',
      description: 'Entries of the one page shown (1-200, default 50).',
      min: 1,
      max: 200,
      exclusive: ['all'],
    }),
    all: Flags.boolean({
      description: 'Every entry, page after page.',
      exclusive: ['limit'],
    }),
  };

  async run(): Promise<void> {
    const { 'event-type': eventType, since, limit, all } = this.flags;
    if (all === true && !this.out.json) {
      // Every page, each printed as it arrives (a terminal's table is fitted to the first).
      const count = await this.withClient((client) =>
        this.out.tablePages(auditEntryPages(client, { eventType, since }), columns, {
          empty: 'No audit entries.',
        }),
      );
      this.warnIfMisspelt(count, eventType);
      return;
    }
    const rows: AuditEntry[] = [];
    // Under --json each entry is written as it arrives; the one page of a table is printed whole.
    const onEntry = this.out.json
      ? (entry: AuditEntry) => this.out.record(entry)
      : (entry: AuditEntry) => rows.push(entry);
    const result = await this.withClient((client) =>
      listAuditEntries(client, { eventType, since, limit, all }, onEntry),
    );
    this.warnIfMisspelt(result.count, eventType);
    if (this.out.json) return;
    await this.out.table(rows, columns, { empty: 'No audit entries.' });
    if (result.more)
      this.out.footnote(`Showing the newest ${result.count}; --all shows every entry, --limit up to 200.`);
  }

  /** Nothing matched an action that is probably misspelt: said on stderr, under --json too. */
  private warnIfMisspelt(count: number, eventType: string | undefined): void {
    const near = count === 0 && eventType !== undefined ? nearAuditAction(eventType) : undefined;
    if (near !== undefined)
      this.out.warn(`No entries with action ${echoed(eventType ?? '')}. Did you mean --event-type ${near}?`);
  }
}
