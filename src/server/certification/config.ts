// Workspace configuration: a fixed set of keys with their allowed values and defaults, the current
// values (defaults until first set) and the history of every change (actor, time, old and new value).
import type { Clock } from '../clock.js';
import type { Queryable } from '../db/handle.js';
import { badRequest } from '../errors.js';

export const CONFIG_KEYS = {
  /** How gate results count; copied onto every table's gate column when set. */
  gate_mode: { allowed: ['ENFORCING', 'ADVISORY'], default: 'ENFORCING' },
  /** Certification needs a SUCCEEDED Gate 3 job since the review proof. */
  gate3_required: { allowed: ['true', 'false'], default: 'false' },
  /** `evidence_required`: certify must name its evidence (evidenceFileName and evidenceHash). */
  inspection_policy: { allowed: ['none', 'evidence_required'], default: 'none' },
  /**
   * A certified view a warehouse rebuild dropped: `republish` publishes it again over the rebuilt rows at
   * once (consumers depend on it); `withhold` leaves it missing until the table is certified again.
   */
  certified_view_after_rebuild: { allowed: ['republish', 'withhold'], default: 'republish' },
} as const satisfies Record<string, { allowed: readonly string[]; default: string }>;

export type ConfigKey = keyof typeof CONFIG_KEYS;

export interface WorkspaceConfig {
  gateMode: 'ENFORCING' | 'ADVISORY';
  gate3Required: boolean;
  inspectionPolicy: 'none' | 'evidence_required';
  certifiedViewAfterRebuild: 'republish' | 'withhold';
}

export interface ConfigEntry {
  key: ConfigKey;
  value: string;
  allowedValues: string[];
  /** Null while the key still holds its default. */
  updatedAt: string | null;
  updatedBy: string | null;
  /** The e-mail of updatedBy, as config history shows it. */
  updatedByEmail: string | null;
}

export interface ConfigChange {
  key: ConfigKey;
  oldValue: string;
  newValue: string;
  changedBy: string;
  changedByEmail: string | null;
  changedAt: string;
}

export function isConfigKey(key: string): key is ConfigKey {
  return Object.hasOwn(CONFIG_KEYS, key);
}

/** The key, or 400 naming the known keys. */
export function requireConfigKey(key: string): ConfigKey {
  if (isConfigKey(key)) return key;
  const keys = Object.keys(CONFIG_KEYS);
  throw badRequest('unknown_config_key', `Unknown configuration key '${key}'. Keys: ${keys.join(', ')}.`, {
    key,
    allowedKeys: keys,
  });
}

/** The value for `key`, or 400 naming the key's allowed values. */
export function requireConfigValue(key: ConfigKey, value: unknown): string {
  const allowed: readonly string[] = CONFIG_KEYS[key].allowed;
  // JSON booleans are accepted for true|false keys: `{"value": true}` means "true".
  const text = typeof value === 'boolean' ? String(value) : value;
  if (typeof text !== 'string' || !allowed.includes(text)) {
    throw badRequest(
      'invalid_config_value',
      `${key} must be one of ${allowed.join(', ')}; got ${JSON.stringify(value ?? null)}.`,
      { key, allowedValues: allowed },
    );
  }
  return text;
}

interface ConfigRow {
  key: string;
  value: string;
  updated_at: Date;
  updated_by: string;
  updated_by_email: string | null;
}

export async function listConfig(q: Queryable, workspaceId: string): Promise<ConfigEntry[]> {
  const rows = await q.query<ConfigRow>(
    `SELECT c.key, c.value, c.updated_at, c.updated_by, u.email AS updated_by_email
       FROM gds.workspace_config c LEFT JOIN gds.users u ON u.id = c.updated_by
      WHERE c.workspace_id = $1`,
    [workspaceId],
  );
  const stored = new Map(rows.map((r) => [r.key, r]));
  return (Object.keys(CONFIG_KEYS) as ConfigKey[]).map((key) => {
    const row = stored.get(key);
    return {
      key,
      value: row?.value ?? CONFIG_KEYS[key].default,
      allowedValues: [...CONFIG_KEYS[key].allowed],
      updatedAt: row ? new Date(row.updated_at).toISOString() : null,
      updatedBy: row?.updated_by ?? null,
      updatedByEmail: row?.updated_by_email ?? null,
    };
  });
}

/** The workspace's configuration as typed values (defaults for keys never set). */
export async function getWorkspaceConfig(q: Queryable, workspaceId: string): Promise<WorkspaceConfig> {
  const values = new Map((await listConfig(q, workspaceId)).map((e) => [e.key, e.value]));
  return {
    gateMode: values.get('gate_mode') === 'ADVISORY' ? 'ADVISORY' : 'ENFORCING',
    gate3Required: values.get('gate3_required') === 'true',
    inspectionPolicy: values.get('inspection_policy') === 'evidence_required' ? 'evidence_required' : 'none',
    certifiedViewAfterRebuild:
      values.get('certified_view_after_rebuild') === 'withhold' ? 'withhold' : 'republish',
  };
}

/**
 * Sets `key` and records the change; returns the previous value. Setting `gate_mode` also sets every
 * table's gate column, so lists and later audit entries (gateModeAtEvaluation) show it. The value the key
 * already holds (and, for `gate_mode`, every table already has) changes nothing: no row, no history entry,
 * `changed: false` with the entry as it stands.
 */
export async function setConfig(
  q: Queryable,
  clock: Clock,
  input: { workspaceId: string; key: ConfigKey; value: string; actor: string },
): Promise<{ oldValue: string; entry: ConfigEntry; changed: boolean }> {
  const now = new Date(clock()).toISOString();
  const [previous] = await q.query<{ value: string }>(
    'SELECT value FROM gds.workspace_config WHERE workspace_id = $1 AND key = $2 FOR UPDATE',
    [input.workspaceId, input.key],
  );
  const oldValue = previous?.value ?? CONFIG_KEYS[input.key].default;
  if (oldValue === input.value && !(await tablesTakeGateMode(q, input))) {
    const entry = (await listConfig(q, input.workspaceId)).find((e) => e.key === input.key);
    if (entry !== undefined) return { oldValue, entry, changed: false };
  }
  await q.query(
    `INSERT INTO gds.workspace_config (workspace_id, key, value, updated_at, updated_by) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (workspace_id, key) DO UPDATE SET value = $3, updated_at = $4, updated_by = $5`,
    [input.workspaceId, input.key, input.value, now, input.actor],
  );
  await q.query(
    `INSERT INTO gds.workspace_config_history (workspace_id, key, old_value, new_value, changed_by, changed_at)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [input.workspaceId, input.key, oldValue, input.value, input.actor, now],
  );
  if (input.key === 'gate_mode') {
    await q.query('UPDATE gds.tables SET gate_mode = $2, updated_at = $3 WHERE workspace_id = $1', [
      input.workspaceId,
      input.value,
      now,
    ]);
  }
  const [actor] = await q.query<{ email: string }>('SELECT email FROM gds.users WHERE id = $1', [
    input.actor,
  ]);
  return {
    oldValue,
    changed: true,
    entry: {
      key: input.key,
      value: input.value,
      allowedValues: [...CONFIG_KEYS[input.key].allowed],
      updatedAt: now,
      updatedBy: input.actor,
      updatedByEmail: actor?.email ?? null,
    },
  };
}

/** Whether setting `gate_mode` to `value` would change some table of the workspace. */
async function tablesTakeGateMode(
  q: Queryable,
  input: { workspaceId: string; key: ConfigKey; value: string },
): Promise<boolean> {
  if (input.key !== 'gate_mode') return false;
  const [other] = await q.query(
    'SELECT 1 FROM gds.tables WHERE workspace_id = $1 AND gate_mode <> $2 LIMIT 1',
    [input.workspaceId, input.value],
  );
  return other !== undefined;
}

export async function configHistory(
  q: Queryable,
  workspaceId: string,
  key: ConfigKey,
): Promise<ConfigChange[]> {
  const rows = await q.query<{
    old_value: string;
    new_value: string;
    changed_by: string;
    changed_by_email: string | null;
    changed_at: Date;
  }>(
    `SELECT h.old_value, h.new_value, h.changed_by, u.email AS changed_by_email, h.changed_at
       FROM gds.workspace_config_history h LEFT JOIN gds.users u ON u.id = h.changed_by
      WHERE h.workspace_id = $1 AND h.key = $2 ORDER BY h.seq`,
    [workspaceId, key],
  );
  return rows.map((r) => ({
    key,
    oldValue: r.old_value,
    newValue: r.new_value,
    changedBy: r.changed_by,
    changedByEmail: r.changed_by_email,
    changedAt: new Date(r.changed_at).toISOString(),
  }));
}
