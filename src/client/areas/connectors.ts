// Warehouse connectors of the workspace (§2.8), and the warehouse objects one reads.
import type { Schema } from '../../contract/types.js';
import { pathOf } from '../transport.js';
import type { CallOptions, Transport } from '../transport.js';

export type Connector = Schema<'Connector'>;
export type ConnectorObjects = Schema<'ConnectorObjects'>;

export interface ConnectorsApi {
  list(options?: CallOptions): Promise<Connector[]>;
  /** The tables of the connector's warehouse schema, with their columns. */
  objects(connectorId: string, options?: CallOptions): Promise<ConnectorObjects>;
}

export function connectorsApi(transport: Transport): ConnectorsApi {
  return {
    async list(options) {
      const { connectors } = await transport.send<Schema<'ConnectorList'>>({
        method: 'GET',
        path: '/api/connectors',
        ...options,
      });
      return connectors;
    },
    objects(connectorId, options) {
      return transport.send<ConnectorObjects>({
        method: 'GET',
        path: pathOf('/api/connectors/{connectorId}/objects', { connectorId }),
        ...options,
      });
    },
  };
}
