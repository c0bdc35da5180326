// How `gds plan` and `gds apply` show a plan and what was applied: one block per changed table (its sign, name,
// source and id, the diffs, the dbt tests that were not mapped) and the summary line; under --json one line
// per table (plan) or per action (apply). Flags both commands share live here too.
import { Flags } from '@oclif/core';
import { onOneLine } from '../core/terminal-text.js';
import type { Output } from './output.js';
import type { Segment } from './segment.js';
import { printUnifiedDiff } from './write-preview.js';
import type { PlannedTable, ProjectPlan } from '../services/project-plan-types.js';
import type { ApplyAction, ApplySummary } from '../services/project-apply.js';
import type { ReportedAction, RunSummary } from '../services/project-report.js';

export const projectFlags = {
  dbt: Flags.string({
    description:
      'The dbt project folder (its target/manifest.json, and catalog.json when there is one), or a folder holding manifest.json.',
    required: true,
  }),
  select: Flags.string({
    description:
      'dbt node selection, as dbt ls resolves it (names, staging.*, tag:, path:, file:, source:, state:modified with --state, +x, x+, @x; repeatable). A selection that matches nothing is a warning (with --strict, exit 2).',
    multiple: true,
  }),
  state: Flags.string({
    description:
      "Folder of the manifest.json state: selectors compare with (dbt's --state; production's, so a pull request plans only what it changed), and of the run_results.json and sources.json result: and source_status: read.",
  }),
  exclude: Flags.string({ description: 'dbt node selection to leave out (repeatable).', multiple: true }),
  selector: Flags.string({
    description:
      "A selector of the project's selectors.yml (dbt's --selector), the whole selection: no --select or --exclude with it. Without any of the three, a selector marked default: true applies, as in dbt.",
  }),
  'indirect-selection': Flags.string({
    description:
      "Which dbt tests of the selected models are Gate 1 rules, as dbt's --indirect-selection decides which run (eager, cautious, buildable, empty; default: DBT_INDIRECT_SELECTION, else dbt_project.yml's flags: indirect_selection, else profiles.yml's config: indirect_selection where the manifest's dbt reads it, else eager).",
    env: 'DBT_INDIRECT_SELECTION',
  }),
  'profiles-dir': Flags.string({
    description:
      "The folder of the profiles.yml whose config: indirect_selection gds reads, as dbt's --profiles-dir (default: DBT_PROFILES_DIR, else the current folder when it holds profiles.yml, else ~/.dbt). Nothing else of it is read.",
    env: 'DBT_PROFILES_DIR',
  }),
  connector: Flags.string({
    description:
      "Connector the project's tables live behind, by id or name (gds connectors list); default: gds.yml, else the only connector (of --env); with --env and several, each table's is the one whose schema holds it.",
  }),
  schema: Flags.string({
    description:
      "Warehouse schema of every table's source, instead of the schema dbt wrote (default: gds.yml).",
  }),
  target: Flags.string({ description: 'The entry of gds.yml targets: to use (connector, schema).' }),
  env: Flags.string({
    description: 'The environment: the entry of gds.yml environments:, or its only connector.',
  }),
  strict: Flags.boolean({
    description:
      'A dbt test that maps to no Gate 1 rule, or a refused model, is exit 7; a --select that matches nothing is exit 2.',
  }),
  adopt: Flags.string({
    description:
      'Take over a table the plan shows as "! owned elsewhere" (another project\'s, or registered by hand), or one with no model its warning names: apply records this project as its owner (in the audit log), then writes or (--prune) removes it. Repeatable.',
    multiple: true,
  }),
};

const SIGNS: Record<PlannedTable['action'], string> = {
  create: '+',
  replace: '~',
  unchanged: '=',
  gone: '-',
  refused: '!',
  'owned-elsewhere': '!',
  skipped: '#',
  submit: '^',
};

const WORDS: Record<PlannedTable['action'], string> = {
  create: 'create',
  replace: 'replace',
  unchanged: 'unchanged',
  gone: 'gone',
  refused: 'refused',
  'owned-elsewhere': 'owned elsewhere',
  skipped: 'skipped',
  submit: 'submit',
};

const COLOURS = {
  create: 'green',
  replace: 'yellow',
  unchanged: 'dim',
  gone: 'red',
  refused: 'red',
  'owned-elsewhere': 'red',
  skipped: 'dim',
  submit: 'cyan',
} as const;

/** The --json line of a planned table. */
export function planRecord(table: PlannedTable): Record<string, unknown> {
  const { work: _work, seen: _seen, selector: _selector, heldName: _heldName, ...record } = table;
  return { ...record, ownership: table.ownership ?? null, owner: table.owner ?? null };
}

function heading(out: Output, table: PlannedTable): Segment {
  const where = [table.source, table.tableId].filter((part) => part !== null).join(', ');
  return out.style(
    COLOURS[table.action],
    `${SIGNS[table.action]} ${WORDS[table.action]} ${table.table}${where === '' ? '' : ` (${where})`}`,
  );
}

/** "2 certified tables read from this: fct_orders, customer_ltv", or undefined when none does. */
export function downstreamLine(table: PlannedTable): string | undefined {
  const names = table.downstreamCertified ?? [];
  if (names.length === 0) return undefined;
  return `${names.length} certified table${names.length === 1 ? ' reads' : 's read'} from this: ${names.join(', ')}`;
}

export const RECERTIFICATION_NOTE =
  'applying this files a recertification request: the table is CERTIFIED and its definition or gate1.yml changes';

/**
 * The last --json line of plan and apply, always printed (nothing to do included): `{"summary":{…}}`. Left
 * out only when `--json a,b` names fields and not `summary`.
 */
export function printSummaryRecord(out: Output, summary: RunSummary): void {
  if (!out.json || (out.fields !== undefined && !out.fields.includes('summary'))) return;
  out.record({ summary });
}

/** The plan, a table at a time, each after stdout has room (`Output.drained`): a long plan piped is not held whole. */
export async function printPlan(
  out: Output,
  plan: ProjectPlan,
  options: { unchanged?: boolean; summary?: RunSummary } = {},
): Promise<void> {
  if (out.json) {
    for (const table of plan.tables) {
      out.record(planRecord(table));
      await out.drained();
    }
    printPlanNotes(out, plan);
    if (options.summary !== undefined) printSummaryRecord(out, options.summary);
    return;
  }
  // The environment's label is the service's: on gds's line, as every string of the service below.
  out.info(
    onOneLine(
      `Project ${plan.project.id} against ${plan.connector.id === null ? "the connector of each source's schema" : `connector ${plan.connector.id}`} (${plan.connector.environmentLabel}):`,
    ),
  );
  for (const table of plan.tables) {
    if (table.action === 'unchanged' && options.unchanged !== true) continue;
    // One line each: the service's strings in them (a table's name, its project) forge no line of the plan's
    // own, nor split the command a reason gives to paste (`--adopt 'orders` / `Forged…'`).
    out.printField(heading(out, table));
    if (table.reason !== undefined) out.printField(`    ${table.reason}`);
    if (table.adopt !== undefined)
      out.printField(
        `    adopt: taken over from ${table.adopt.from === null ? 'no project (registered by hand)' : `project ${table.adopt.from}`}`,
      );
    const downstream = downstreamLine(table);
    if (downstream !== undefined) out.printField(`  ${downstream}`);
    if (table.recertificationRequested === true) out.print(`  ${RECERTIFICATION_NOTE}`);
    for (const [part, diff] of Object.entries(table.diffs)) {
      if (diff === undefined || diff === '') continue;
      out.print(`  ${part === 'gate1' ? 'gate1.yml' : part}:`);
      printUnifiedDiff(out, diff);
    }
    if (table.rules !== undefined && table.rules.length > 0) {
      out.print('  rules:');
      for (const rule of table.rules) out.print(`    ${rule}`);
    }
    if (table.action !== 'gone') {
      out.print(`  dbt tests: ${table.mappedTests.length} mapped, ${table.notMappedTests.length} not mapped`);
      for (const test of table.notMappedTests) out.print(`    not mapped: ${test.test}: ${test.reason}`);
    }
    out.print('');
    await out.drained();
  }
  if (plan.otherTests.length > 0) {
    out.print(`Tests on no selected table (${plan.otherTests.length}, not mapped):`);
    for (const test of plan.otherTests) out.print(`  ${test.test}: ${test.reason}`);
    out.print('');
  }
  const { otherProjects, byHand } = plan.untouched;
  if (otherProjects + byHand > 0)
    out.printField(
      `Left alone in ${plan.connector.environmentLabel}: ${otherProjects} table${otherProjects === 1 ? '' : 's'} of other projects, ${byHand} registered by hand.`,
    );
  for (const warning of groupedWarnings(plan.warnings)) out.warn(onOneLine(warning));
  if (plan.proposal !== undefined) out.info(plan.proposal);
  out.print(summaryLine(plan));
}

/**
 * A dbt unique id (`model.shop.orders`, `test.shop.not_null_orders_id.6a1f2c`), as a warning starts with it: a
 * resource type of dbt's, its package and a name. A file named first (`catalog.json: …`) is no node.
 */
const DBT_ID =
  /^(?:model|seed|snapshot|test|unit_test|source|analysis|operation|sql_operation|exposure|metric|semantic_model|saved_query|group|macro)\.[^.\s]+\.\S+$/;
/** Where one warning is said of this many tests (or nodes) or more, the human plan says it once. */
const GROUPED_FROM = 3;

/**
 * The reader's warnings as the human plan says them: one said alike of many tests (a package's macro that a
 * dispatch: order could run instead, on each of 2,000 tests) once, with how many and the first two; the others as
 * they are, in their order. --json keeps one line each; `listsEach` says where the reader finds them.
 */
export function groupedWarnings(warnings: readonly string[], listsEach = '--json lists each'): string[] {
  const groups = new Map<string, { kind: 'tests' | 'nodes'; ids: string[] }>();
  const keyed = warnings.map((warning) => {
    const [node, second, ...rest] = warning.split(': ');
    if (node === undefined || !DBT_ID.test(node) || second === undefined) return { warning };
    const ofTest = DBT_ID.test(second) && rest.length > 0;
    const message = ofTest ? rest.join(': ') : [second, ...rest].join(': ');
    const key = `${ofTest ? 'tests' : 'nodes'}\u0000${message}`;
    const group = groups.get(key) ?? { kind: ofTest ? 'tests' : 'nodes', ids: [] };
    group.ids.push(ofTest ? second : node);
    groups.set(key, group);
    return { warning, key, message };
  });
  const said = new Set<string>();
  const lines: string[] = [];
  for (const { warning, key, message } of keyed) {
    const group = key === undefined ? undefined : groups.get(key);
    if (key === undefined || group === undefined || group.ids.length < GROUPED_FROM) {
      lines.push(warning);
      continue;
    }
    if (said.has(key)) continue;
    said.add(key);
    const [first, second] = group.ids;
    const more = group.ids.length - 2;
    lines.push(
      `${group.ids.length} ${group.kind}: ${message ?? ''} (${first ?? ''}, ${second ?? ''} and ${more} more; ${listsEach})`,
    );
  }
  return lines;
}

/**
 * Under --json, what the human plan says besides its tables, each a `{"warning"}` line on stderr (stdout
 * stays one line per table): the dbt tests on no selected table, and the reader's warnings.
 */
export function printPlanNotes(out: Output, plan: ProjectPlan): void {
  for (const test of plan.otherTests)
    out.warn(`${test.test}: not mapped, on no selected table: ${test.reason}`);
  for (const warning of plan.warnings) out.warn(warning);
}

export function summaryLine(plan: ProjectPlan): string {
  const { create, replace, unchanged, gone, refused, ownedElsewhere, skipped, submit } = plan.counts;
  const line = `Plan: ${create} to create, ${replace} to change, ${unchanged} unchanged, ${gone} to remove.`;
  const extra = [
    ...(submit === 0 ? [] : [`${submit} to submit.`]),
    ...(refused === 0 ? [] : [`${refused} refused.`]),
    ...(ownedElsewhere === 0 ? [] : [`${ownedElsewhere} owned elsewhere.`]),
    ...(skipped === 0 ? [] : [`${skipped} skipped.`]),
  ];
  return [line, ...extra].join(' ');
}

export function printAction(out: Output, action: ReportedAction): void {
  if (out.json) {
    out.record(action);
    return;
  }
  const id = action.tableId === null ? '' : ` (${action.tableId})`;
  const version = action.version === undefined ? '' : ` v${action.version}`;
  // One line each: a reason or a message holding the service's strings (a proof's time) forges no other.
  const what =
    action.outcome === 'failed'
      ? `failed: ${onOneLine(failedWith(action.error))}`
      : action.outcome === 'unchanged'
        ? `no change${action.reason === undefined ? '' : ` (${onOneLine(action.reason)})`}`
        : `done${version}`;
  const recertification =
    action.recertificationRequested === true
      ? '; filed a recertification request (the table was CERTIFIED)'
      : '';
  // The table's name too: a gone table's is the service's (`orders\nForged: …`).
  out.info(`${onOneLine(action.table)}${id}: ${action.step} ${what}${recertification}`);
}

/** A failed step's message, then what to do when the error says (a 409's promotion): apply prints no other line. */
function failedWith(error: ApplyAction['error']): string {
  if (error === undefined) return '';
  return error.suggestion === undefined
    ? error.message
    : `${error.message.replace(/\.$/, '')}. ${error.suggestion}`;
}

/**
 * The end of an apply: one line on a terminal (each failure's message was printed as it happened, above), the
 * summary record under --json.
 */
export function printApplySummary(out: Output, applied: ApplySummary, summary: RunSummary): void {
  const notPruned =
    applied.pruneSkipped === 0
      ? undefined
      : `Not pruned: ${applied.pruneSkipped} gone table${applied.pruneSkipped === 1 ? ' stays' : 's stay'} until every create and replace succeeds (${applied.failed.length > 0 ? `${applied.failed.length} failed` : `${summary.refused} refused`}).`;
  if (out.json) {
    if (notPruned !== undefined) out.warn(notPruned);
    printSummaryRecord(out, summary);
    return;
  }
  const done = applied.actions.filter((a) => a.outcome === 'done').length;
  const failed =
    applied.failed.length === 0 ? '' : `: ${applied.failed.map((f) => `${f.table} (${f.step})`).join(', ')}`;
  const recertification =
    summary.recertificationRequested === 0
      ? ''
      : ` ${summary.recertificationRequested} recertification request${summary.recertificationRequested === 1 ? '' : 's'} filed.`;
  // One line: a failed table's name may be the service's (a gone table's), and must not start a line of its own.
  out.printField(
    `Apply: ${applied.applied} table${applied.applied === 1 ? '' : 's'} applied (${done} write${done === 1 ? '' : 's'}), ${applied.failed.length} failed${failed}.${recertification}`,
  );
  if (notPruned !== undefined) out.print(notPruned);
}
