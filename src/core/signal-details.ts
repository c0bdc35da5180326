// A recertification signal's details in one line, for the terminal and the dashboard.

/**
 * `reason: wrong load; restoredFrom: 1`: the reason first, then the other keys in alphabetical order (the
 * database does not keep the order they were written in); strings as they are, anything else as JSON;
 * `—` when there is nothing.
 */
export function describeSignalDetails(details: Readonly<Record<string, unknown>> | null | undefined): string {
  const parts = Object.entries(details ?? {})
    .filter(([, value]) => value !== undefined && value !== null)
    .sort(([a], [b]) => (a === 'reason' ? -1 : b === 'reason' ? 1 : a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);
  return parts.length === 0 ? '—' : parts.join('; ');
}
