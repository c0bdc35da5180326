import { Args } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { tableEnvFlag } from '../../cli/governance-flags.js';
import { suggestGate } from '../../services/gates.js';
import { writeDocument } from '../../cli/gate-output.js';

export default class GateSuggest extends ApiCommand<typeof GateSuggest> {
  static override summary =
    'Propose gate1.yml checks from profiling the rows: YAML on stdout, reasons on stderr.';
  static override description =
    'stdout carries only the YAML (a valid gate1.yml), so it can be piped into gds gate apply -f - or saved; ' +
    'the justification of each stub and the notes go to stderr. Review before applying. Under --json one line ' +
    '{tableId,yaml,suggestions,notes,profile}.';
  static override examples = [
    '<%= config.bin %> gate suggest t_42 > gate1.yml',
    '<%= config.bin %> gate suggest t_42 | <%= config.bin %> gate apply t_42 -f -',
  ];
  static override args = { tableId: Args.string({ description: 'The table id or name.', required: true }) };
  static override flags = { env: tableEnvFlag };

  async run(): Promise<void> {
    const suggested = await this.out.during(`Proposing checks for ${this.args.tableId}…`, () =>
      this.withClient(async (client) => suggestGate(client, await this.tableIdOf(client, this.args.tableId))),
    );
    if (this.out.json) {
      this.out.record(suggested);
      return;
    }
    // Comment lines: info puts each on one line, so a line break in the service's text starts none without its `#`.
    for (const s of suggested.suggestions)
      this.out.info(`# ${s.name} (${s.kind}, ${s.column}): ${s.justification}`);
    for (const n of suggested.notes) this.out.info(`# note on ${n.column}: ${n.note}`);
    await writeDocument(this.out, suggested.yaml);
  }
}
