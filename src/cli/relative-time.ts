// How a time reads for a person at a terminal, as gh's `timeago`: `3m ago`, `in 59m`. Tables (table.ts) and
// detail views (Output.when) use it; piped and under --json times stay ISO.
// Made on first use: creating it maps ICU's locale data (+7 MiB, ~15 ms), which a run printing no relative time never needs.
let relative: Intl.RelativeTimeFormat | undefined;
const units: ReadonlyArray<[Intl.RelativeTimeFormatUnit, number]> = [
  ['year', 365 * 86_400_000],
  ['month', 30 * 86_400_000],
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
  ['second', 1000],
];

/** `3m ago`, `2d ago`, `in 5h`: an ISO time relative to `now`; anything else is returned as it is. */
export function relativeTime(value: string, now = Date.now()): string {
  const at = Date.parse(value);
  if (!/^\d{4}-\d\d-\d\dT/.test(value) || Number.isNaN(at)) return value;
  const delta = at - now;
  if (Math.abs(delta) < 1000) return 'now';
  for (const [unit, size] of units) {
    if (Math.abs(delta) >= size) {
      relative ??= new Intl.RelativeTimeFormat('en', { style: 'narrow' });
      return relative.format(Math.trunc(delta / size), unit);
    }
  }
  return 'now';
}
