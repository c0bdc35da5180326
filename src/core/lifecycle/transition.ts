import { GUARDS, TRANSITIONS } from './table.js';
import type { FromStates, TransitionRow } from './table.js';
import type { LifecycleState, TransitionContext, TransitionResult, Trigger } from './types.js';

/**
 * Decides what a trigger does to a table in `state` (null: no table) under `context`, by the first matching row of
 * the transition table. Pure: the caller (the server's lifecycle engine) writes the audit entry and carries out
 * the effects in order.
 */
export function transition(
  state: LifecycleState | null,
  trigger: Trigger,
  context: TransitionContext,
): TransitionResult {
  const row = TRANSITIONS.find(
    (r) =>
      fromMatches(r.from, state) &&
      (r.trigger === trigger || r.trigger === 'any') &&
      (!r.when || GUARDS[r.when](context)),
  );
  if (!row) throw new Error(`lifecycle: no transition row for ${trigger} from ${state ?? 'none'}`);
  return resultOf(row, state, context);
}

function fromMatches(from: FromStates, state: LifecycleState | null): boolean {
  if (from === 'none') return state === null;
  if (state === null) return false;
  return from === 'any' || from.includes(state);
}

function resultOf(
  row: TransitionRow,
  state: LifecycleState | null,
  context: TransitionContext,
): TransitionResult {
  const { outcome } = row;
  if ('refuse' in outcome) {
    const { status, code, message } = outcome.refuse;
    const details = outcome.refuse.details?.(context);
    return {
      ok: false,
      row: row.id,
      status,
      code,
      message: typeof message === 'string' ? message : message(context, state),
      ...(details ? { details } : {}),
      ...(outcome.audit ? { audit: { ...outcome.audit } } : {}),
    };
  }
  const next = outcome.next === 'unchanged' ? state : outcome.next;
  if (next === null) throw new Error(`lifecycle: row ${row.id} keeps a table that does not exist`);
  return {
    ok: true,
    row: row.id,
    next,
    effects: outcome.effects.map((e) => ({ ...e })),
    ...(outcome.audit ? { audit: { ...outcome.audit } } : {}),
    ...(outcome.status ? { status: outcome.status } : {}),
    ...(outcome.recertifyOutcome ? { recertifyOutcome: outcome.recertifyOutcome } : {}),
  };
}
