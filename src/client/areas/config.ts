// Workspace configuration (`gds config list|set|history`).
import type { Schema } from '../../contract/types.js';
import { pathOf } from '../transport.js';
import type { CallOptions, Transport } from '../transport.js';

export type ConfigEntry = Schema<'ConfigEntry'>;
export type ConfigChange = Schema<'ConfigChange'>;

export interface ConfigApi {
  /** Every key with its value, defaults included. */
  list(options?: CallOptions): Promise<ConfigEntry[]>;
  /** `changed: false` when the key already held the value: nothing was written. */
  set(key: string, value: string, options?: CallOptions): Promise<ConfigEntry>;
  /** Every change of one key, oldest first. */
  history(key: string, options?: CallOptions): Promise<ConfigChange[]>;
}

export function configApi(transport: Transport): ConfigApi {
  return {
    async list(options) {
      const { config } = await transport.send<Schema<'ConfigList'>>({
        method: 'GET',
        path: '/api/config',
        ...options,
      });
      return config;
    },
    async set(key, value, options) {
      return transport.send<ConfigEntry>({
        method: 'PUT',
        path: pathOf('/api/config/{key}', { key }),
        body: { value },
        ...options,
      });
    },
    async history(key, options) {
      const { changes } = await transport.send<Schema<'ConfigHistory'>>({
        method: 'GET',
        path: pathOf('/api/config/{key}/history', { key }),
        ...options,
      });
      return changes;
    },
  };
}
