// The seal of a portable bundle (`gds env promote --bundle-out/--bundle-in`): a sha256 over the canonical
// JSON (object keys sorted at every level, no whitespace, undefined members left out) of everything
// but the `sha256` member itself. The service seals and checks the same way; gds checks before sending.
import { createHash } from 'node:crypto';

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v: unknown) => canonicalJson(v ?? null)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The sha256 the bundle should carry. */
export function bundleDigest(bundle: Record<string, unknown>): string {
  const { sha256: _seal, ...body } = bundle;
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

/** True when `bundle.sha256` matches its content. */
export function isSealIntact(bundle: Record<string, unknown>): boolean {
  return typeof bundle.sha256 === 'string' && bundle.sha256 === bundleDigest(bundle);
}
