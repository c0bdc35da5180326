// A new gate1.yml version stored through the lifecycle (`gate_applied`, spec §4.9 `gate apply`): the
// version, its audit entry and, on a CERTIFIED table, a recertification request; whichever path writes the
// rules (gate apply, an item of an artifact batch, a promotion or bundle landing them).
import type { Caller } from '../auth/caller.js';
import type { Clock } from '../clock.js';
import type { Queryable } from '../db/handle.js';
import { applyTrigger, fileRecertificationRequest } from '../governance/engine.js';
import type { TableRow } from '../governance/tables.js';
import { storeGate1Version } from './gate1-store.js';

export interface StoredGate1 {
  version: number;
  createdAt: string;
  recertificationRequestId: string | null;
}

/** Stores `content` as `table`'s next gate1.yml version, in the caller's transaction (the table locked). */
export async function storeGate1Rules(
  tx: Queryable,
  input: {
    table: TableRow;
    content: string;
    caller: Caller;
    clock: Clock;
  },
): Promise<StoredGate1> {
  const { table, content, caller, clock } = input;
  const { effects } = await applyTrigger(tx, {
    table,
    trigger: 'gate_applied',
    context: { mode: table.mode, tableName: table.name },
    actor: caller,
    clock,
    details: { gate1Version: table.gate1Version + 1 },
  });
  const createdAt = new Date(clock()).toISOString();
  let version = table.gate1Version;
  let recertificationRequestId: string | null = null;
  for (const effect of effects) {
    if (effect.type === 'store_gate_rules_version') {
      version = await storeGate1Version(tx, {
        tableId: table.id,
        content,
        createdBy: caller.userId,
        createdAt,
      });
    } else if (effect.type === 'file_recertification') {
      recertificationRequestId = await fileRecertificationRequest(tx, {
        tableId: table.id,
        cause: effect.cause,
        details: { reason: 'gate1.yml applied', gate1Version: version },
        actor: caller,
        clock,
      });
    }
  }
  return { version, createdAt, recertificationRequestId };
}
