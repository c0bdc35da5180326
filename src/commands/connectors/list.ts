import { ApiCommand } from '../../cli/api-command.js';
import { connectorColumns } from '../../cli/governance-views.js';
import { limitFlag } from '../../cli/list-flags.js';
import { listConnectors } from '../../services/connectors.js';

export default class ConnectorsList extends ApiCommand<typeof ConnectorsList> {
  static override pager = true;
  static override summary = 'List the warehouse connectors of your workspace.';
  static override description =
    'The ids to pass to `gds push --connector`, with their type, status and environment. Under --json one line per connector.';
  static override examples = [
    '<%= config.bin %> connectors list',
    '<%= config.bin %> connectors list --json | jq -r \'select(.environmentLabel == "dev") | .id\'',
  ];

  static override flags = { limit: limitFlag };

  async run(): Promise<void> {
    const connectors = await this.withClient((client) => listConnectors(client));
    await this.out.table(connectors, connectorColumns, { limit: this.flags.limit, empty: 'No connectors.' });
  }
}
