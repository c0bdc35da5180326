// Warehouse connectors of the workspace (§2.8).
import type { Schema } from '../../contract/types.js';
import type { CallOptions, Transport } from '../transport.js';

export type Connector = Schema<'Connector'>;

export interface ConnectorsApi {
  list(options?: CallOptions): Promise<Connector[]>;
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
  };
}
