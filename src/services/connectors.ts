// `gds connectors list`: the workspace's warehouse connectors (§2.8).
import type { ApiClient } from '../client/index.js';
import type { Connector } from '../client/areas/connectors.js';

export type ConnectorsClient = Pick<ApiClient, 'connectors'>;

export function listConnectors(client: ConnectorsClient): Promise<Connector[]> {
  return client.connectors.list();
}
