import { Flags } from '@oclif/core';
import { ApiCommand } from '../cli/api-command.js';
import { CliError, ExitCode } from '../core/errors.js';
import { freeingExitOne, withExitCode } from '../cli/errors.js';
import { projectFlags, printPlan, summaryLine } from '../cli/project-views.js';
import { readProject, strictFailure } from '../services/project.js';
import { planChanges } from '../services/project-plan.js';
import { planSummary } from '../services/project-report.js';
import { printPlanMarkdown } from '../cli/plan-markdown.js';
import { planFileText } from '../services/project-saved.js';
import { writeDocument } from '../cli/gate-output.js';
import { writeOutputFile, writesToStdout } from '../io/output-file.js';

export default class Plan extends ApiCommand<typeof Plan> {
  static override summary =
    'Compare a dbt project with what the service holds, table by table; sends nothing.';
  static override description =
    "Reads the dbt project's own artifacts (target/manifest.json, and catalog.json for the warehouse's column " +
    'types; nothing of dbt runs): each selected model, seed and snapshot is a table, its dbt tests Gate 1 rules ' +
    '(not_null, unique, accepted_values, relationships, expression_is_true, ranges, regexes; every other test is ' +
    'listed as not mapped), its meta.gds the contract intent. Each is matched with the tables of the ' +
    "connector's environment, by source and then by name, and shown as + create, ~ replace (the definition, " +
    'gate1.yml and contract diffs), = unchanged, - gone (a table this project registered whose model left the ' +
    'project, selected or not, or became ephemeral; apply removes it only with --prune), ! refused (with the ' +
    "reason and the fix: among others a source that is not a warehouse object of the connector, as apply's " +
    'registration would refuse it) or # skipped (a node gds governs nothing of, with the reason: an ephemeral ' +
    'model, which dbt builds no relation for; it holds nothing back, and apply exits 0 for it). With --submit, ' +
    'as apply --submit plans: a table of this project that nothing else changes, QUARANTINED and never ' +
    'submitted as it is (a run killed before its submissions leaves such tables), is ^ submit, and so is one ' +
    'PENDING_REVIEW whose proof went stale (rebuilt, or its contract changed, since it was submitted: gds recertify says so of a rebuild); one a ' +
    'steward rejected as it is, CERTIFIED or beyond never is, and a CERTIFIED table whose change ' +
    'leaves it CERTIFIED (its gate1.yml or contract intent) says under its ~ replace that apply --submit does ' +
    'not submit it again. Ownership is ' +
    "held by the service: only this project's tables (its id: gds.yml's project:, else dbt's name with the " +
    'connector) are replaced or gone; a matching table of another project, or one registered by hand, is ' +
    '! owned elsewhere (apply refuses it unless --adopt names it); so is a table under a derived id in a schema ' +
    "none of the project's models is built into (another project of the same dbt name on the connector), " +
    'and one of those with no model is never gone; and when no table under a derived id is a node of the ' +
    "project (another project of the name in the same schema), none is gone and this project's models are " +
    'refused rather than created under the id: a warning gives the project: line for gds.yml, or the --adopt. ' +
    'A table to create or replace names the ' +
    'CERTIFIED tables downstream of it in the dbt DAG ("2 certified tables read from this: …"), and says when ' +
    'applying it files a recertification request (a CERTIFIED table whose definition or gate1.yml changes). ' +
    'Ends with "Plan: N to create, N to change, N unchanged, N to remove." (then, when there are, "N to submit.", ' +
    '"N refused.", "N owned elsewhere.", "N skipped."). Defaults come from gds.yml beside ' +
    'dbt_project.yml (connector, schema, select, exclude, targets, environments); flags win. ' +
    "--detailed-exitcode (as terraform's): 0 nothing to do, 1 error (every failure, a usage error included), 2 " +
    'a table to create, change, remove or (with --submit) submit. --exit-code: exit 1 when a table would be ' +
    'created, changed or (with --submit) submitted, 0 ' +
    'otherwise (gone tables are shown but not counted), 2 or more on a failure. --format markdown writes the plan for a pull-request ' +
    'comment: a summary table, then one collapsible block per changed table. Under --json one line per table: ' +
    'table, source, action, tableId (null when new), uniqueId, mappedTests, notMappedTests [{test, reason, excluded (true: the selection left it out)}], ' +
    'rules (every Gate 1 rule in words, implied ones included), changes, diffs, ownership (this, other, hand; ' +
    'null when new), owner, reason (why refused, owned elsewhere, skipped, or with --submit submitted or not), ' +
    'staleSubmission (true on a ^ submit of a table PENDING_REVIEW with a stale proof), ' +
    'downstreamCertified, ' +
    'recertificationRequested; then always one last line {"summary":{create, replace, unchanged, remove, ' +
    'failed, refused, skipped, submit, recertificationRequested}}.';
  static override examples = [
    '<%= config.bin %> plan --dbt .',
    '<%= config.bin %> plan --dbt ~/jaffle_shop --connector warehouse-dev --select staging.* --select tag:finance',
    '<%= config.bin %> plan --dbt . --detailed-exitcode   # in CI: 0 nothing to do, 2 changes, 1 error',
    '<%= config.bin %> plan --dbt . --format markdown > plan.md   # a pull-request comment',
    '<%= config.bin %> plan --dbt . --select state:modified+ --state prod-artifacts/   # only what the pull request changed',
    '<%= config.bin %> plan --dbt . --adopt customers   # preview taking over a table registered by hand',
    '<%= config.bin %> plan --dbt . --submit   # also what apply --submit would submit for review',
    '<%= config.bin %> plan --dbt . --out plan.json && gds apply plan.json   # apply exactly what was reviewed',
    '<%= config.bin %> plan --dbt . --json | jq -c \'select(.action and .action != "unchanged") | {table, action}\'',
    "<%= config.bin %> plan --dbt . --json | tail -n 1 | jq '.summary'",
  ];
  static override flags = {
    ...projectFlags,
    'detailed-exitcode': Flags.boolean({
      description:
        'Exit 0 when there is nothing to do, 2 when a table would be created, changed or removed, 1 on any error.',
      exclusive: ['exit-code'],
    }),
    'exit-code': Flags.boolean({
      description:
        'Exit 1 when a table would be created or changed, 0 otherwise (gone tables are not counted), 2 or more on a failure.',
    }),
    format: Flags.option({
      description: 'text (the default) or markdown (for a pull-request comment).',
      options: ['text', 'markdown'] as const,
      default: 'text',
    })(),
    unchanged: Flags.boolean({ description: 'Also show a block for each unchanged table.' }),
    submit: Flags.boolean({
      description:
        'Plan as apply --submit: a QUARANTINED table of this project never submitted as it is, or one PENDING_REVIEW with a stale proof, is ^ submit (kept by --out).',
    }),
    out: Flags.string({
      description:
        'Also save the plan to this file (0600, written whole or not at all), with what the service held of each table: gds apply FILE applies exactly it. - writes the plan file to stdout instead of the plan (its summary goes to stderr).',
    }),
    force: Flags.boolean({ description: 'Replace the --out file if it exists.', dependsOn: ['out'] }),
  };

  async run(): Promise<void> {
    if (this.flags.format === 'markdown' && this.out.json)
      throw new CliError('--format markdown and --json each choose the output: pass one of them.', {
        exitCode: ExitCode.Usage,
        code: 'usage',
      });
    // `--out -`: stdout carries the plan file alone, as `-o -` elsewhere; the plan's text would spoil it.
    const toStdout = writesToStdout(this.flags.out, { flag: '--out', json: this.out.json });
    if (toStdout && this.flags.format === 'markdown')
      throw new CliError('--out - and --format markdown each write to stdout: pass one of them.', {
        exitCode: ExitCode.Usage,
        code: 'stdout_taken',
        suggestion: 'Give --out a file path to have both, the plan file there and the markdown on stdout.',
      });
    const plan = await this.withClient(async (client) => readProject(client, this.flags));
    const summary = planSummary(plan);
    if (toStdout) {
      await writeDocument(this.out, planFileText(plan, new Date()));
      this.out.info(summaryLine(plan));
    } else if (this.flags.format === 'markdown') {
      printPlanMarkdown(this.out, plan, summary);
    } else await printPlan(this.out, plan, { unchanged: this.flags.unchanged, summary });
    if (this.flags.out !== undefined && !toStdout) {
      await writeOutputFile(this.flags.out, planFileText(plan, new Date()), {
        force: this.flags.force,
        mode: 0o600,
        flag: '--out',
        example: 'plan.json',
      });
      this.out.success(
        `Saved the plan to ${this.flags.out}: apply exactly it with gds apply ${this.flags.out}.`,
      );
    }
    if (this.flags.strict) {
      const failure = strictFailure(plan);
      if (failure !== undefined) throw failure;
    }
    if (this.flags['detailed-exitcode'] && planChanges(plan, { prune: true }))
      process.exitCode = DETAILED_CHANGES;
    if (this.flags['exit-code'] && planChanges(plan)) process.exitCode = ExitCode.Failure;
  }

  /**
   * Under --detailed-exitcode every failure ends with 1 (a usage error included), so that 2 means changes only;
   * under --exit-code none ends with 1, which means a change: 2, as gate diff's. A failure thrown by run() or
   * met writing the output (a --jq filter failing on a record) alike.
   */
  protected override endingFailure(failure: CliError): CliError {
    if (this.flagGiven('detailed-exitcode'))
      return failure.exitCode === ExitCode.Interrupted ? failure : withExitCode(failure, ExitCode.Failure);
    return this.flagGiven('exit-code') ? freeingExitOne(failure) : failure;
  }
}

/** terraform's `-detailed-exitcode` for "the plan has changes". */
const DETAILED_CHANGES = 2;
