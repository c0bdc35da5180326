import { Flags } from '@oclif/core';
import { ApiCommand } from '../cli/api-command.js';
import { ExitCode } from '../cli/errors.js';
import { projectFlags } from '../cli/project-views.js';

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
    'project, selected or not; apply removes it only with --prune) or ! refused (with the reason). Ownership is ' +
    "held by the service: only this project's tables (its id: gds.yml's project:, else dbt's name with the " +
    'connector) are replaced or gone; a matching table of another project, or one registered by hand, is ' +
    '! owned elsewhere (apply refuses it unless --adopt names it). Ends with ' +
    '"Plan: N to create, N to change, N unchanged, N to remove.". Defaults come from gds.yml beside ' +
    'dbt_project.yml (connector, schema, select, exclude, targets, environments); flags win. --exit-code: exit 1 ' +
    'when a table would be created or changed, 0 otherwise (gone tables are shown but not counted: only apply --prune removes them). Under --json one line per table: table, source, action, ' +
    'tableId (null when new), uniqueId, mappedTests, notMappedTests [{test, reason}], rules (every Gate 1 rule in words, implied ones included), changes, diffs, ownership ' +
    '(this, other, hand; null when new), owner.';
  static override examples = [
    '<%= config.bin %> plan --dbt .',
    '<%= config.bin %> plan --dbt ~/jaffle_shop --connector con_dev --select staging.* --select tag:finance',
    '<%= config.bin %> plan --dbt . --exit-code   # in CI on a pull request: 1 when apply would change something',
    '<%= config.bin %> plan --dbt . --select state:modified+ --state prod-artifacts/   # only what the pull request changed',
    '<%= config.bin %> plan --dbt . --adopt customers   # preview taking over a table registered by hand',
    '<%= config.bin %> plan --dbt . --json | jq -c \'select(.action != "unchanged") | {table, action}\'',
  ];
  static override flags = {
    ...projectFlags,
    'exit-code': Flags.boolean({
      description:
        'Exit 1 when a table would be created or changed, 0 otherwise (gone tables are not counted).',
    }),
    unchanged: Flags.boolean({ description: 'Also show a block for each unchanged table.' }),
  };

  async run(): Promise<void> {
    const { readProject, strictFailure } = await import('../services/project.js');
    const { planChanges } = await import('../services/project-plan.js');
    const { printPlan } = await import('../cli/project-views.js');
    const plan = await this.withClient(async (client) => readProject(client, this.flags));
    printPlan(this.out, plan, { unchanged: this.flags.unchanged });
    if (this.flags.strict) {
      const failure = strictFailure(plan);
      if (failure !== undefined) throw failure;
    }
    if (this.flags['exit-code'] && planChanges(plan)) process.exitCode = ExitCode.Failure;
  }
}
