import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import type { ApiClient } from '../../client/index.js';
import {
  dialectFlag,
  filenameFlag,
  modelFlag,
  replaceFlag,
  requiredConnectorFlag,
  sourceFlag,
} from '../../cli/governance-flags.js';
import { resolveConnectorId } from '../../services/connector-ref.js';
import { drawForConnector } from '../../services/tokens.js';
import { inConnectorDialect, pushDefinition, readArtifactLocally } from '../../services/artifacts.js';

export default class DefinitionsPush extends ApiCommand<typeof DefinitionsPush> {
  static override summary = 'Register or replace a definition from CI with a MANAGEMENT token.';
  static override description =
    'The CI path: POST /api/workspace/definitions with a MANAGEMENT token holding workspace:write:definition ' +
    '(SERVICE_TOKEN), or a CLI token (gds auth token create) of a STEWARD or above, on which gds draws that ' +
    "60-minute token, in the connector's environment, as it runs; nothing is stored locally. " +
    'The file is parsed here first, like ' +
    '`gds push`. Prints only the governance id on stdout, so GID=$(gds definitions push …) works; keep it ' +
    'and pass it to --replace on later changes. Under --json one line: the registration and `replaced`. ' +
    'A MANAGEMENT token cannot read the definition it replaces: --if-match <definitionVersion> (the version ' +
    'the last push answered) makes the replacement conditional, refused with exit 6 (412 precondition_failed) when ' +
    'another write changed the table since.';
  static override examples = [
    'GID=$(SERVICE_TOKEN=$MANAGEMENT_TOKEN <%= config.bin %> definitions push models/orders.sql --connector con_prod)',
    'SERVICE_TOKEN=$MANAGEMENT_TOKEN <%= config.bin %> definitions push models/orders.sql --connector con_prod --replace "$GID"',
    'SERVICE_TOKEN=$MANAGEMENT_TOKEN <%= config.bin %> definitions push models/orders.sql --connector con_prod --replace "$GID" --if-match 3',
    'SERVICE_TOKEN=$MANAGEMENT_TOKEN <%= config.bin %> definitions push views/orders.sql --dialect bigquery --connector con_bq',
    'SERVICE_TOKEN=$MANAGEMENT_TOKEN <%= config.bin %> definitions push models/schema.yml --model orders --source analytics.orders --connector con_prod',
  ];
  static override args = {
    file: Args.string({
      description:
        'The artifact file (.sql, .yml, .yaml, .json), or - for stdin (with --filename naming it).',
      required: true,
    }),
  };
  static override flags = {
    connector: requiredConnectorFlag,
    source: sourceFlag,
    replace: replaceFlag,
    'if-match': Flags.integer({
      description:
        'Replace only if the table is still at this definition version (the definitionVersion the last push answered); exit 6 otherwise.',
      min: 0,
      dependsOn: ['replace'],
    }),
    dialect: dialectFlag,
    model: modelFlag,
    filename: filenameFlag,
  };

  async run(): Promise<void> {
    const { connector, source, replace, dialect, model, filename } = this.flags;
    const options = { source, dialect, model, connectorId: connector, filename };
    const read = await readArtifactLocally(this.args.file, options);
    // Holding a person's CLI token (or sign-in), gds draws the 60-minute MANAGEMENT token this call takes, in
    // the connector's environment, which the person's own client looks up (a MANAGEMENT token cannot).
    let drawnFor: string | undefined;
    const draw = async (personal: ApiClient) => {
      const drawn = await drawForConnector(personal, connector, 'workspace:write:definition');
      drawnFor = drawn.connectorId;
      return drawn.request;
    };
    const { artifact, result } = await this.withClient(
      async (client) => {
        const resolving = drawnFor ?? resolveConnectorId(client, connector);
        const local = await inConnectorDialect(client, read, options, resolving);
        const connectorId = await resolving;
        return {
          artifact: local,
          result: await pushDefinition(client, local, {
            connectorId,
            replaceId: replace,
            ifMatch: this.flags['if-match'],
          }),
        };
      },
      { draw },
    );
    if (this.out.json) {
      this.out.record(result);
      return;
    }
    this.out.print(result.governanceId);
    if (result.changed === false) {
      this.out.success(
        `No change: ${result.governanceId} already holds this definition of ${artifact.table}.`,
      );
      return;
    }
    this.out.success(
      `${result.replaced ? 'Replaced' : 'Registered'} ${artifact.table}; tracking ${result.trackingUrl}; baseline job ${result.job.id} ${result.job.status}.`,
    );
  }
}
