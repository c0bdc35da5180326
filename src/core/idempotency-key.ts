// The `Idempotency-Key` the service accepts on a keyed request (the recertification signal, the Gate 1
// submission), one definition for gds (which refuses another before it sends, exit 2) and the service (400
// `invalid_idempotency_key`, nothing applied).

/** The longest key the service keeps. */
export const MAX_IDEMPOTENCY_KEY_CHARS = 200;

/** What a key may be, said as the refusals say it. */
export const IDEMPOTENCY_KEY_RULE = `1-${MAX_IDEMPOTENCY_KEY_CHARS} printable ASCII characters without spaces`;

/** Whether the service takes `key` as an `Idempotency-Key`: 1-200 printable ASCII characters, no space. */
export function isIdempotencyKey(key: string): boolean {
  return key.length > 0 && key.length <= MAX_IDEMPOTENCY_KEY_CHARS && /^[\x21-\x7e]+$/.test(key);
}
