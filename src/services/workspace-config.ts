// `gds config list|set|history`: the workspace's configuration and its audit trail.
import { closest } from '../core/did-you-mean.js';
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

/** The key and value the person most likely meant, when one of them is not what the workspace knows. */
export function nearConfig(
  key: string,
  value: string,
  entries: ReadonlyArray<{ key: string; allowedValues: readonly string[] }>,
): { key: string; value: string } | undefined {
  const known = entries.find((entry) => entry.key === key);
  const entry =
    known ??
    entries.find(
      (e) =>
        e.key ===
        closest(
          key,
          entries.map((x) => x.key),
        ),
    );
  if (entry === undefined) return undefined;
  const allowed = entry.allowedValues;
  const near = allowed.includes(value) ? value : closest(value, allowed);
  if (near === undefined) return known === undefined ? { key: entry.key, value } : undefined;
  if (known !== undefined && near === value) return undefined;
  return { key: entry.key, value: near };
}
