/** The longest a timer can wait: past 2^31 - 1 ms, setTimeout fires at once (after 1 ms). */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * A wait in milliseconds given by an environment variable (GDS_LOCK_WAIT_MS, GDS_KEYCHAIN_TIMEOUT_MS, …): a number
 * from `min` up, one larger than `max` (at most MAX_TIMER_MS) taken as `max`; `fallback` when it is unset, empty,
 * not a number or below `min`.
 */
export function envMilliseconds(
  value: string | undefined,
  fallback: number,
  { min = 1, max = MAX_TIMER_MS }: { min?: number; max?: number } = {},
): number {
  if (value === undefined || value.trim() === '') return fallback;
  const ms = Number(value);
  if (Number.isNaN(ms) || ms < min) return fallback;
  return Math.min(ms, max, MAX_TIMER_MS);
}
