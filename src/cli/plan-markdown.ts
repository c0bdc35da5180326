// `gds plan --format markdown`: the plan as a pull-request comment (GitHub and GitLab render it alike): a
// heading, a table of the counts, the summary line, then one collapsible <details> block per table that is
// not unchanged (its diffs in ```diff fences, the certified tables downstream of it, the refusal's reason
// and fix). Names and diffs come from the dbt project and the service: control characters are stripped,
// names and sentences are put on one line, HTML is escaped, and a fence is longer than any run of backticks
// inside it. A comment is capped at 65,536 characters on GitHub: past about 60,000 the remaining tables are
// named in one line instead (as far as 2,000 characters go), and the reader's warnings, grouped as the human
// plan groups them, are quoted as far as the cap leaves room, the rest counted.
import { onOneLine, stripControlCharacters } from '../core/terminal-text.js';
import type { PlannedTable, ProjectPlan } from '../services/project-plan-types.js';
import type { RunSummary } from '../services/project-report.js';
import type { Output } from './output.js';
import { downstreamLine, groupedWarnings, RECERTIFICATION_NOTE, summaryLine } from './project-views.js';

const BUDGET = 60_000;
/** Below GitHub's 65,536 characters, whatever the tables past the budget and the warnings. */
const CAP = 65_000;
const NAMED_AT_MOST = 2_000;
const MORE_WARNINGS_AT_MOST = 80;

const SIGN: Record<PlannedTable['action'], string> = {
  create: '+ create',
  replace: '~ replace',
  unchanged: '= unchanged',
  gone: '- gone',
  refused: '! refused',
  'owned-elsewhere': '! owned elsewhere',
  skipped: '# skipped',
  submit: '^ submit',
};

/** One line (onOneLine): a line break in a service's string (a table's name) would end the paragraph, the
 *  blockquote or the <summary> it stands in, and start a line of the comment that reads as gds's own. */
function html(text: string): string {
  return onOneLine(text)
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;');
}

/** Text for a markdown paragraph or table cell: HTML escaped, and `|`, `*`, `_`, `` ` `` taken literally. */
function text(value: string): string {
  return html(value).replace(/[|*_`[\]\\]/g, (c) => `\\${c}`);
}

function fenced(body: string, language: string): string[] {
  const clean = stripControlCharacters(body).replace(/\n$/, '');
  const longest = Math.max(0, ...[...clean.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return [`${fence}${language}`, clean, fence];
}

function block(table: PlannedTable): string {
  const where = [table.source, table.tableId].filter((part) => part !== null).join(', ');
  const lines = [
    '<details>',
    `<summary><code>${SIGN[table.action]}</code> <strong>${html(table.table)}</strong>${where === '' ? '' : ` (${html(where)})`}</summary>`,
    '',
  ];
  if (table.reason !== undefined) lines.push(text(table.reason), '');
  const downstream = downstreamLine(table);
  if (downstream !== undefined) lines.push(`**${text(downstream)}**`, '');
  if (table.recertificationRequested === true) lines.push(text(RECERTIFICATION_NOTE), '');
  for (const [part, diff] of Object.entries(table.diffs)) {
    if (diff === undefined || diff === '') continue;
    lines.push(`${part === 'gate1' ? 'gate1.yml' : part}:`, '', ...fenced(diff, 'diff'), '');
  }
  if (table.action !== 'gone') {
    lines.push(
      `dbt tests: ${table.mappedTests.length} mapped, ${table.notMappedTests.length} not mapped`,
      '',
    );
    for (const test of table.notMappedTests)
      lines.push(`- not mapped: ${text(`${test.test}: ${test.reason}`)}`);
    if (table.notMappedTests.length > 0) lines.push('');
  }
  lines.push('</details>', '');
  return lines.join('\n');
}

/** The whole comment, as one string. */
export function planMarkdown(plan: ProjectPlan, summary: RunSummary): string {
  const target =
    plan.connector.id === null
      ? `the connectors of ${plan.connector.environmentLabel}`
      : `connector ${plan.connector.id} (${plan.connector.environmentLabel})`;
  const rows: Array<[string, number]> = [
    ['+ create', summary.create],
    ['~ replace', summary.replace],
    ['= unchanged', summary.unchanged],
    ['- remove', summary.remove],
    ['! refused', summary.refused],
    ...(summary.submit === 0 ? [] : [['^ submit', summary.submit] as [string, number]]),
    ...(summary.skipped === 0 ? [] : [['# skipped', summary.skipped] as [string, number]]),
  ];
  const head = [
    `### gds plan: ${text(plan.projectName)} against ${text(target)}`,
    '',
    '| Action | Tables |',
    '| --- | ---: |',
    ...rows.map(([action, count]) => `| \`${action}\` | ${count} |`),
    '',
    `**${text(summaryLine(plan))}**${summary.recertificationRequested === 0 ? '' : ` Applying files ${summary.recertificationRequested} recertification request${summary.recertificationRequested === 1 ? '' : 's'}.`}`,
    '',
  ].join('\n');
  let body = '';
  const left: string[] = [];
  for (const table of plan.tables) {
    if (table.action === 'unchanged') continue;
    const next = block(table);
    if (left.length > 0 || head.length + body.length + next.length > BUDGET) left.push(table.table);
    else body += next;
  }
  const rest =
    left.length === 0
      ? ''
      : `${left.length} more table${left.length === 1 ? '' : 's'} change (the whole plan is in the job's log): ${named(left)}\n`;
  const comment = `${head}\n${body}${rest}`;
  const warnings = quotedWarnings(plan.warnings, CAP - comment.length);
  return `${comment}${warnings === '' ? '' : `\n${warnings}\n`}`;
}

/** The tables past the budget, named as far as NAMED_AT_MOST characters go (thousands would pass GitHub's cap). */
function named(tables: readonly string[]): string {
  let line = '';
  for (const [i, table] of tables.entries()) {
    const next = `${line === '' ? '' : ', '}${text(table)}`;
    if (line.length + next.length > NAMED_AT_MOST) return `${line} and ${tables.length - i} more`;
    line += next;
  }
  return line;
}

/** The reader's warnings as a blockquote, grouped as the human plan says them, as far as `room` goes. */
function quotedWarnings(warnings: readonly string[], room: number): string {
  const lines: string[] = [];
  let used = 0;
  // The comment's reader ran no --json: running the plan with it lists each warning on a line of its own.
  const grouped = groupedWarnings(warnings, 'gds plan --json lists each');
  for (const [i, warning] of grouped.entries()) {
    const line = `> ${text(warning)}`;
    if (used + line.length + 1 > room - MORE_WARNINGS_AT_MOST) {
      lines.push(`> ${grouped.length - i} more warnings (the whole plan is in the job's log)`);
      break;
    }
    lines.push(line);
    used += line.length + 1;
  }
  return lines.join('\n');
}

export function printPlanMarkdown(out: Output, plan: ProjectPlan, summary: RunSummary): void {
  out.printLines(
    planMarkdown(plan, summary)
      .replace(/\n$/, '')
      .split('\n')
      .map((line) => [line]),
  );
}
