// An ISO-8601 time as the service's filters take it (the audit log's `since`): a date, or a date and a time
// with an optional offset. The server checks its query with it, and the CLI its flags, before sending.

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/** Whether the date part of `raw` is a day its month has: JavaScript reads 2026-02-30 as March 2. */
export function isCalendarDate(raw: string): boolean {
  const [year, month, day] = raw.slice(0, 10).split('-').map(Number) as [number, number, number];
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
  return day >= 1 && day <= days;
}

/**
 * `raw` as a full ISO time (`2026-01-31T00:00:00.000Z`), or undefined when it is not one: not of the form, a
 * time JavaScript does not read (25:00), or a day its month does not have (2026-02-30). A date alone is its
 * midnight UTC, and a time without an offset is UTC (JavaScript would read it in the local zone).
 */
export function isoTimestamp(raw: string): string | undefined {
  if (!ISO_TIMESTAMP.test(raw) || !isCalendarDate(raw)) return undefined;
  const time = Date.parse(/T[^Z+-]*$/.test(raw) ? `${raw}Z` : raw);
  return Number.isNaN(time) ? undefined : new Date(time).toISOString();
}
