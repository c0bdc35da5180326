// `gds config list|set|history`: the workspace's configuration and its audit trail.
import type { ApiClient } from '../client/index.js';
import type { ConfigChange, ConfigEntry } from '../client/areas/config.js';

export type ConfigClient = Pick<ApiClient, 'config'>;
type Call = { signal?: AbortSignal };

export async function listConfig(client: ConfigClient, call: Call = {}): Promise<ConfigEntry[]> {
  return client.config.list(call);
}

export async function setConfig(
  client: ConfigClient,
  key: string,
  value: string,
  call: Call = {},
): Promise<ConfigEntry> {
  return client.config.set(key, value, call);
}

export async function configHistory(
  client: ConfigClient,
  key: string,
  call: Call = {},
): Promise<ConfigChange[]> {
  return client.config.history(key, call);
}
