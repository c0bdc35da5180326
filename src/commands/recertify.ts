import { Flags } from '@oclif/core';
import { ApiCommand } from '../cli/api-command.js';
import { boundedText } from '../cli/governance-flags.js';
import { outcomeColumns } from '../cli/governance-views.js';
import { longerThan, MAX_SIGNAL_NAME_CHARS, MAX_TRIGGER_CHARS } from '../core/text-bounds.js';
import { ApiError } from '../client/errors.js';
import { CliError, ExitCode } from '../core/errors.js';
import { onOneLine } from '../core/terminal-text.js';
import type { RecertifyRunReport } from '../services/recertification.js';
import {
  ambiguousNote,
  recertify,
  recertifyRequest,
  staleSubmissionsNote,
} from '../services/recertification.js';

export default class Recertify extends ApiCommand<typeof Recertify> {
  static override summary = 'Tell the service which tables a pipeline run rebuilt, e.g. after dbt run.';
  static override description =
    'A MANAGEMENT token with workspace:write:recertify, or a CLI token (gds auth token create) of a STEWARD or ' +
    "above, on which gds draws that 60-minute token as it runs (SERVICE_TOKEN in CI). Either --run-results (dbt's " +
    'target/run_results.json, schema v1-v6, with --manifest to match models by definition) or --tables a,b. ' +
    'Models, seeds and snapshots with status success (or partial success: a microbatch model some of whose ' +
    'batches failed) are the rebuilt tables; tests are evidence only; those that failed or were skipped are ' +
    'not signalled, and stderr names them (--json: a warning line, code not_rebuilt). A run ' +
    'that built nothing (dbt docs generate, compile, list, parse, show) exits 7 and sends nothing; one that rebuilt ' +
    'more than 500 tables (the most a signal names), or more than 500 --tables, is sent as several signals of at most 500, one after ' +
    'another, each waited for up to ten minutes. Each part of a run carries an idempotency key (from the ' +
    'run and the environment): the service applies it once, so running the same command again never ' +
    'applies a part twice. When a run stops part-way (a network error, a service restarted, Ctrl-C), the error says ' +
    'which dbt nodes were signalled, which may have been (the part whose answer was lost) and which were not ' +
    '(--json: details.signalled, unconfirmed, notSent), and the answered parts are kept under ' +
    '$XDG_STATE_HOME/gds/recertify: the same command run again sends only the rest. The manifest ' +
    'is reduced to the fields drift detection reads, and, when the request would pass 25 MB, each run result to ' +
    'its status, node, relation and message, so files of any size fit (run results that fit are sent as dbt ' +
    'wrote them; a signal over 25 MB even so, from messages that long, is exit 2 and nothing is sent); a file that is not a manifest is ' +
    "left out with one warning on stderr. --env names the environment; a person's CLI token or sign-in and an " +
    'environment-agnostic token need it, an environment-scoped MANAGEMENT token may omit it. Shows what was filed per table, and the certified view of each ' +
    'CERTIFIED table: one a rebuild dropped (dbt renames and drops … cascade) is published again when the ' +
    'relation still has the certified columns, and stderr says so (or why it cannot). A table waiting for ' +
    'review that the run rebuilt now has a stale proof (certify is blocked until it is submitted again): stderr ' +
    'names such tables, and their outcomes carry staleSubmission: true. Under --json ONE line: the whole ' +
    'response (environmentLabel, submitted, governed, outcomes[]); `jq -c ".outcomes[]"` gives one line per table.';
  static override examples = [
    '<%= config.bin %> recertify --run-results target/run_results.json --manifest target/manifest.json --env production',
    '<%= config.bin %> recertify --tables orders,customers --env staging --trigger NIGHTLY_LOAD',
    '<%= config.bin %> recertify --run-results target/run_results.json --env production --evidence-run-id "$CI_PIPELINE_ID" --json',
  ];
  static override flags = {
    'run-results': Flags.string({
      description: "dbt's run_results.json.",
      exactlyOne: ['run-results', 'tables'],
    }),
    manifest: Flags.string({
      description: "dbt's manifest.json, alongside --run-results.",
      dependsOn: ['run-results'],
    }),
    tables: Flags.custom<string[]>({
      description:
        'Comma-separated names of the tables rebuilt (over 500 sent as signals of 500); schema.table names the table over that relation.',
      exactlyOne: ['run-results', 'tables'],
      parse: async (input) => {
        const names = input.split(',').map((n) => n.trim());
        if (names.some((n) => n === '')) throw new Error(`${JSON.stringify(input)} has an empty table name`);
        const long = names.find((n) => longerThan(n, MAX_SIGNAL_NAME_CHARS));
        if (long !== undefined)
          throw new Error(
            `${JSON.stringify(long.slice(0, 40))}… is over ${MAX_SIGNAL_NAME_CHARS} characters: name tables`,
          );
        return names;
      },
    })(),
    env: Flags.string({
      description: 'Environment label of the run (dev, staging, production, …).',
    }),
    trigger: Flags.string({
      description: 'What ran (default PIPELINE_RUN).',
      parse: boundedText('trigger', MAX_TRIGGER_CHARS),
    }),
    'evidence-run-id': Flags.string({
      description: 'Id of the pipeline run, stamped on the audit event as evidence.',
    }),
  };

  async run(): Promise<void> {
    const flags = this.flags;
    const input = {
      runResults: flags['run-results'],
      manifest: flags.manifest,
      tables: flags.tables,
      environmentLabel: flags.env,
      trigger: flags.trigger,
      evidenceRunId: flags['evidence-run-id'],
    };
    const warn = (warning: { code: string; message: string; details?: object }) => {
      if (this.out.json) this.out.errorRecord({ warning });
      else this.out.warn(warning.message);
    };
    // The files are read and checked first: bad input is refused before any token is drawn or request sent.
    const request = await recertifyRequest(input, warn);
    // Holding a person's CLI token (or sign-in), gds draws the 60-minute MANAGEMENT token this call takes.
    // It is drawn for the run's environment: one for every environment would need --env all the same.
    const envRequired = () =>
      new CliError('recertify needs --env: the environment whose run rebuilt the tables.', {
        exitCode: ExitCode.Usage,
        code: 'env_required',
        suggestion:
          'Pass --env dev, staging or production (the label of the connector the run wrote through). Only an environment-scoped MANAGEMENT token in SERVICE_TOKEN may omit it.',
      });
    const draw = async () => {
      if (flags.env === undefined) throw envRequired();
      return { env: flags.env, scopes: ['workspace:write:recertify' as const] };
    };
    const response = await this.out.during('Asking the service to recertify the rebuilt tables…', () =>
      this.withClient(
        (client, session) =>
          recertify(
            client,
            {
              ...input,
              service: session.baseUrl,
              // The run's state is kept per workspace: the token's (never the token itself).
              token: session.credentials?.token,
              progress: (report) => this.standing(report),
            },
            warn,
            request,
          ).catch((error: unknown) => {
            // An environment-agnostic MANAGEMENT token without --env: the service refused it (400, nothing
            // applied) naming its body field; said as for a CLI token, in the flag's terms, with its exit code.
            if (flags.env === undefined && error instanceof ApiError && error.code === 'environment_required')
              throw envRequired();
            throw error;
          }),
        { draw },
      ),
    );
    if (this.out.json) {
      this.out.record(response);
      return;
    }
    await this.out.table(response.outcomes, outcomeColumns);
    // A certified view published again, or missing and not publishable: said, with why.
    for (const view of response.outcomes.flatMap((o) => (o.certifiedView ? [o.certifiedView] : []))) {
      if (view.health !== 'published') this.out.info(onOneLine(view.detail));
    }
    // The service's strings on one line each: a table name on two lines forges no line of these notes.
    const stale = response.outcomes.filter((o) => o.staleSubmission === true).map((o) => onOneLine(o.table));
    if (stale.length > 0) this.out.info(staleSubmissionsNote(stale));
    // A bare name tables in several schemas answer to: none was signalled, and the name alone cannot say which.
    for (const { table, ambiguous } of response.outcomes)
      if (ambiguous !== undefined && ambiguous.length > 0)
        this.out.info(ambiguousNote(onOneLine(table), ambiguous.map(onOneLine)));
    this.out.info(
      `Environment ${onOneLine(response.environmentLabel)}: ${response.submitted} submitted, ${response.governed} governed.`,
    );
  }

  /** Where the run stands, for a Ctrl-C or SIGTERM: the `Interrupted.` error says it and how to go on. */
  private standing(report: RecertifyRunReport): void {
    const { signalled, unconfirmed, notSent } = report;
    if (unconfirmed.length === 0 && notSent.length === 0) {
      this.interruptDetails = undefined;
      this.interruptAdvice = undefined;
      return;
    }
    const { resumable, ...details } = report;
    this.interruptDetails = details;
    this.interruptAdvice =
      `${signalled.length} of ${signalled.length + unconfirmed.length + notSent.length} rebuilt tables were signalled` +
      (unconfirmed.length > 0 ? `, ${unconfirmed.length} may have been (the answer did not arrive)` : '') +
      `, ${notSent.length} were not. ` +
      (resumable
        ? 'Run the same gds recertify again: it sends only the parts not signalled, and the service answers a ' +
          'part it already applied without applying it twice.'
        : 'Run the same gds recertify again to signal the rest: its signals carry no idempotency key (--tables, ' +
          'or run results without a dbt invocation id), so the tables already signalled are signalled again.');
  }
}
