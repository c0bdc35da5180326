import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../cli/api-command.js';
import { CliError, ExitCode } from '../core/errors.js';
import {
  projectFlags,
  printAction,
  printApplySummary,
  printPlan,
  printPlanNotes,
  printSummaryRecord,
  summaryLine,
} from '../cli/project-views.js';
import type { ProjectPlan } from '../services/project-plan-types.js';
import type { ReportedAction } from '../services/project-report.js';
import { canAsk, confirm } from '../cli/prompt.js';
import { readProject, strictFailure } from '../services/project.js';
import { applyPlan, hasWork } from '../services/project-apply.js';
import { applySummary, recertificationMarker } from '../services/project-report.js';
import { sessionFailure } from '../cli/session.js';
import { checkSavedPlan, readPlanFile } from '../services/project-saved.js';

export default class Apply extends ApiCommand<typeof Apply> {
  static override summary = 'Converge the service on a dbt project: carry out what gds plan shows.';
  static override description =
    'Plans first (as gds plan), shows the plan and asks on a terminal; without a terminal it needs --yes. Then, ' +
    'for each table to create or replace, 50 tables a request (POST /api/artifacts/batch; a table that cannot go ' +
    'in a batch: at most --concurrency at a time, default 4; a 429 is waited out as its Retry-After says): ' +
    'registers or replaces the definition, applies its gate1.yml, sets its ' +
    'contract intent; nothing for unchanged tables. Every step compares with what the service holds right ' +
    'before writing and the service writes only a real change, so a run killed at any point and run again ' +
    'converges (no duplicate table, no second version of an unchanged definition or gate1.yml), and applies ' +
    'run together make one version per change. --submit then moves each changed table to PENDING_REVIEW (the ' +
    "steward's handoff), and each table of the project QUARANTINED and never submitted as it is (plan --submit " +
    'shows it as ^ submit; a run killed before its submissions leaves such tables), and submits again each ' +
    'one PENDING_REVIEW with a stale proof (rebuilt, or its contract changed, since it was submitted, so certify is blocked: in CI run ' +
    'gds recertify before apply --submit) while it still is one (a person who submitted it since leaves it ' +
    'fresh: its submit step is unchanged, "already submitted since the plan", no second scan or steward ' +
    'notification); never one a steward rejected as it is, CERTIFIED or beyond; nor a ' +
    'CERTIFIED table whose change leaves it ' +
    'CERTIFIED (its gate1.yml or contract intent): its submit step is unchanged, with the reason (gds gate ' +
    'submit submits it). --prune soft-deletes the gone tables, only this ' +
    "project's and only when every create and replace of the run succeeded; a node gds governs nothing of (an " +
    'ephemeral model, # skipped in the plan) holds nothing back. A table the plan shows "! owned elsewhere" ' +
    "(another project's, or registered by hand) is refused (exit 6) unless --adopt names it: its owner is " +
    'then recorded in the audit log. A write ' +
    'to a CERTIFIED table (its definition or gate1.yml) files a recertification request, and its line says so. ' +
    'Ends with a summary; when tables failed it names them, keeps what the others applied, and exits with the ' +
    'exit code of the first failure; tables the plan refused (each with its reason and fix) are not sent, and ' +
    'the run then exits 7. Under --json one line per action {table, tableId, step, outcome, version?, reason?, ' +
    'error?, recertificationRequested?}, then always (nothing to apply included) one last line {"summary":{create, ' +
    'replace, unchanged, remove, failed, refused, skipped, submit, recertificationRequested}}.';
  static override examples = [
    '<%= config.bin %> apply --dbt .',
    '<%= config.bin %> apply --dbt . --yes --json   # CI on the main branch',
    "<%= config.bin %> apply --dbt . --yes --json | tail -n 1 | jq '.summary'",
    '<%= config.bin %> apply --dbt ~/jaffle_shop --connector con_dev --select staging.* --submit --yes',
    '<%= config.bin %> apply --dbt . --adopt customers --yes   # take over a table registered by hand',
    '<%= config.bin %> apply plan.json --yes   # exactly the plan gds plan --out plan.json saved',
  ];
  static override args = {
    file: Args.string({
      description:
        'A plan gds plan --out wrote: applied exactly, refused (exit 6) if the service changed since.',
    }),
  };
  static override flags = {
    ...projectFlags,
    dbt: Flags.string({
      description:
        'The dbt project folder (its target/manifest.json, and catalog.json when there is one), or a folder holding manifest.json. Required unless FILE is given.',
    }),
    yes: Flags.boolean({ char: 'y', description: 'Apply without asking (needed without a terminal).' }),
    concurrency: Flags.integer({
      description: 'Tables applied at a time (default 4).',
      default: 4,
      min: 1,
      max: 32,
    }),
    submit: Flags.boolean({
      description:
        'Move each changed table to PENDING_REVIEW after applying (gate submit), never a CERTIFIED one, each QUARANTINED one never submitted as it is, and each PENDING_REVIEW one with a stale proof.',
    }),
    prune: Flags.boolean({ description: 'Soft-delete the tables the plan shows as gone.' }),
  };

  async run(): Promise<void> {
    const { yes } = this.flags;
    if (!yes && !canAsk()) {
      throw new CliError('gds apply asks before writing, and there is no terminal to ask on.', {
        exitCode: ExitCode.Usage,
        code: 'confirmation_required',
        suggestion: 'Run gds plan to see what would change, then gds apply --yes.',
      });
    }
    const saved = await this.savedPlan();
    const reported: ReportedAction[] = [];
    const run = await this.withClient(async (client, session) => {
      const plan = saved ?? (await readProject(client, { ...this.flags, dbt: this.flags.dbt ?? '' }));
      if (saved !== undefined) {
        await checkSavedPlan(client, saved);
      }
      if (this.out.json) printPlanNotes(this.out, plan);
      else await printPlan(this.out, plan);
      if (this.flags.strict) {
        const failure = strictFailure(plan);
        if (failure !== undefined) throw failure;
      }
      if (!hasWork(plan, { prune: this.flags.prune })) {
        if (this.out.json) printSummaryRecord(this.out, applySummary(plan, undefined));
        else this.out.info('Nothing to apply.');
        const refusal = refusedFailure(plan, 0);
        if (refusal !== undefined) throw refusal;
        return undefined;
      }
      if (!yes && !(await confirm(`Apply this plan? ${summaryLine(plan)}`))) {
        throw new CliError('Not applied: nothing was sent.', {
          exitCode: ExitCode.Failure,
          code: 'not_confirmed',
          suggestion: 'Answer y to apply, or pass --yes to skip the question.',
        });
      }
      const marked = recertificationMarker(plan);
      const applied = await applyPlan(client, plan, {
        concurrency: this.flags.concurrency,
        submit: this.flags.submit || plan.submit === true,
        prune: this.flags.prune,
        describe: (error) => sessionFailure(error, session),
        onAction: (action) => {
          const shown = marked(action);
          reported.push(shown);
          printAction(this.out, shown);
        },
      });
      return { plan, applied };
    });
    if (run === undefined) return;
    const summary = run.applied;
    printApplySummary(this.out, summary, applySummary(run.plan, summary, reported));
    const [first] = summary.failed;
    if (first !== undefined) {
      const others =
        summary.applied === 0
          ? 'nothing was applied'
          : `${summary.applied} other${summary.applied === 1 ? ' is' : 's are'} applied`;
      throw new CliError(
        `${summary.failed.length} table${summary.failed.length === 1 ? '' : 's'} failed; ${others}.`,
        {
          exitCode: first.error.exitCode,
          code: first.error.code,
          suggestion: 'Fix what each failure says and run gds apply again: what is applied already is kept.',
          details: {
            failed: summary.failed.map((f) => ({
              table: f.table,
              tableId: f.tableId,
              step: f.step,
              code: f.error.code,
              message: f.error.message,
            })),
          },
        },
      );
    }
    const refusal = refusedFailure(run.plan, summary.applied);
    if (refusal !== undefined) throw refusal;
  }

  /** The plan of FILE, or undefined without one; FILE with flags that shape a plan, or neither, is exit 2. */
  private async savedPlan() {
    const { file } = this.args;
    const shaping = (
      ['dbt', 'select', 'exclude', 'selector', 'connector', 'schema', 'target', 'env', 'adopt'] as const
    ).filter((name) => this.flags[name] !== undefined);
    if (file === undefined) {
      if (this.flags.dbt === undefined)
        throw new CliError('Which project? Pass --dbt DIR, or a plan file gds plan --out wrote.', {
          exitCode: ExitCode.Usage,
          code: 'project_required',
          suggestion:
            'gds apply --dbt . (plans and applies), or gds plan --dbt . --out plan.json then gds apply plan.json.',
        });
      return undefined;
    }
    if (shaping.length > 0)
      throw new CliError(
        `A saved plan is applied as it was planned: --${shaping.join(', --')} belong to gds plan.`,
        {
          exitCode: ExitCode.Usage,
          code: 'plan_file_with_flags',
          suggestion: `Plan again with them (gds plan … --out ${file}), or apply ${file} without them.`,
        },
      );
    return readPlanFile(file);
  }
}

/** Tables the plan refused were not applied: exit 7 once the others are, naming them (each reason is above). */
function refusedFailure(plan: ProjectPlan, applied: number): CliError | undefined {
  const refused = plan.tables.filter((t) => t.action === 'refused');
  if (refused.length === 0) return undefined;
  const others =
    applied === 0 ? 'nothing was applied' : `${applied} other${applied === 1 ? ' is' : 's are'} applied`;
  return new CliError(
    `${refused.length} table${refused.length === 1 ? ' was' : 's were'} refused (${refused.map((t) => t.table).join(', ')}); ${others}.`,
    {
      exitCode: ExitCode.Refused,
      code: 'refused',
      suggestion: 'Each refused table says why and what to pass above; fix it and run gds apply again.',
      details: { refused: refused.map((t) => ({ table: t.table, reason: t.reason })) },
    },
  );
}
