// A timestamp of a row read from the database (a Date from the driver, or its text) as the contract writes one.

/** The instant in ISO-8601, UTC, to the millisecond (`2026-01-02T03:04:05.678Z`). */
export function isoOf(value: Date | string): string {
  return new Date(value).toISOString();
}

/** As isoOf; null for a timestamp the row does not hold. */
export function isoOrNull(value: Date | string | null): string | null {
  return value === null ? null : isoOf(value);
}
