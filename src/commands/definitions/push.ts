import { Args } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { replaceFlag, requiredConnectorFlag, sourceFlag } from '../../cli/governance-flags.js';

export default class DefinitionsPush extends ApiCommand<typeof DefinitionsPush> {
  static override summary = 'Register or replace a definition from CI with a MANAGEMENT token.';
  static override description =
    'The CI path: POST /api/workspace/definitions with a MANAGEMENT token holding workspace:write:definition ' +
    '(SERVICE_TOKEN, not a personal token); nothing is stored locally. The file is parsed here first, like ' +
    '`gds push`. Prints only the governance id on stdout, so GID=$(gds definitions push …) works; keep it ' +
    'and pass it to --replace on later changes. Under --json one line: the registration and `replaced`.';
  static override examples = [
    'GID=$(SERVICE_TOKEN=$MANAGEMENT_TOKEN <%= config.bin %> definitions push models/orders.sql --connector con_prod)',
    'SERVICE_TOKEN=$MANAGEMENT_TOKEN <%= config.bin %> definitions push models/orders.sql --connector con_prod --replace "$GID"',
  ];
  static override args = {
    file: Args.string({ description: 'The artifact file (.sql, .yml, .yaml, .json).', required: true }),
  };
  static override flags = {
    connector: requiredConnectorFlag,
    source: sourceFlag,
    replace: replaceFlag,
  };

  async run(): Promise<void> {
    const { pushDefinition, readArtifact } = await import('../../services/artifacts.js');
    const { connector, source, replace } = this.flags;
    const artifact = await readArtifact(this.args.file, { source });
    const result = await this.withClient((client) =>
      pushDefinition(client, artifact, { connectorId: connector, replaceId: replace }),
    );
    if (this.out.json) {
      this.out.record(result);
      return;
    }
    this.out.print(result.governanceId);
    this.out.info(
      `${result.replaced ? 'Replaced' : 'Registered'} ${artifact.table}; tracking ${result.trackingUrl}; baseline job ${result.job.id} ${result.job.status}.`,
    );
  }
}
