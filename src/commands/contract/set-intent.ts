import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { tableEnvFlag } from '../../cli/governance-flags.js';
import { dryRunFlag, printPreview } from '../../cli/write-preview.js';
import { consumerClasses, intents, intentRequest, setIntent } from '../../services/contract-intent.js';

export default class ContractSetIntent extends ApiCommand<typeof ContractSetIntent> {
  static override summary = 'Set the decision class, consumer classes and structured grain of a contract.';
  static override description =
    `--intent is one of ${intents.join(', ')}; --allowed-consumers a comma list of ${consumerClasses.join(', ')}. ` +
    '--grain-type and --grain-key go together. Fields not given carry forward unchanged. ' +
    'The live contract is read first: values it already holds send nothing ("No change", exit 0). ' +
    '--dry-run prints the diff of the fields and sends nothing. Under --json one line, the live contract.';
  static override examples = [
    '<%= config.bin %> contract set-intent t_42 --intent METRIC --allowed-consumers HUMAN,AI',
    '<%= config.bin %> contract set-intent t_42 --intent DECISION --dry-run',
    '<%= config.bin %> contract set-intent t_42 --grain-type ONE_PER_ENTITY --grain-key customer_id,region --grain "one row per customer and region"',
  ];
  static override args = { tableId: Args.string({ description: 'The table id or name.', required: true }) };
  static override flags = {
    env: tableEnvFlag,
    intent: Flags.string({ description: `Decision class: ${intents.join(', ')}.` }),
    'allowed-consumers': Flags.string({
      description: `Comma list of consumer classes: ${consumerClasses.join(', ')}.`,
    }),
    'grain-type': Flags.string({
      description: 'Structured grain type, e.g. ONE_PER_ENTITY (with --grain-key).',
    }),
    'grain-key': Flags.string({
      description: 'Grain key columns, comma separated (with --grain-type).',
    }),
    grain: Flags.string({ description: 'Grain as text.' }),
    meaning: Flags.string({ description: 'What the table means.' }),
    'dry-run': dryRunFlag,
  };

  async run(): Promise<void> {
    const f = this.flags;
    const request = intentRequest({
      intent: f.intent,
      allowedConsumers: f['allowed-consumers'],
      grainType: f['grain-type'],
      grainKey: f['grain-key'],
      grain: f.grain,
      meaning: f.meaning,
    });
    const dryRun = f['dry-run'];
    const outcome = await this.withClient(async (client) =>
      setIntent(client, await this.tableIdOf(client, this.args.tableId), request, { dryRun }),
    );
    if (outcome.kind === 'preview') {
      printPreview(this.out, { changed: true, diff: outcome.diff }, '');
      return;
    }
    const { contract } = outcome;
    if (outcome.kind === 'unchanged') {
      const noChange = `No change: the contract of ${this.args.tableId} already holds these values (${contract.status}).`;
      if (dryRun) printPreview(this.out, { changed: false, diff: '' }, noChange);
      else if (this.out.json) this.out.record({ ...contract, changed: false });
      else this.out.success(noChange);
      return;
    }
    if (this.out.json) {
      this.out.record(contract);
      return;
    }
    this.out.printField(`Contract of ${this.args.tableId} (${contract.status}):`);
    this.out.printField(`  intent:            ${contract.intent ?? '-'}`);
    this.out.printField(`  allowed consumers: ${contract.allowedConsumers.join(', ') || '-'}`);
    this.out.printField(`  grain:             ${contract.grain || '-'}`);
    this.out.printField(
      `  grain type / key:  ${contract.grainType ?? '-'} / ${contract.grainKeyColumns.join(', ') || '-'}`,
    );
    this.out.printField(`  meaning:           ${contract.meaning || '-'}`);
  }
}
