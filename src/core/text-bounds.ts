// The lengths of what a caller writes that the service keeps, one definition for gds (which refuses past them
// before it sends, exit 2) and the service (400 `text_too_long`, nothing changed). A note or reason is kept in
// an audit entry, which keeps at most 96 KB of details: 10,000 characters are at most 60,000 bytes as JSON
// (each escaped as \uXXXX), so the entry keeps the text whole instead of leaving it out.

/** A certification's note, a rejection's, a restore's or a dismissal's reason. */
export const MAX_NOTE_CHARS = 10_000;
/** Certify's evidenceFileName: a file's name, not its content. */
export const MAX_FILE_NAME_CHARS = 1_024;
/** An integration or CLI token's name (openapi.yaml IssueTokenRequest.name and CreateCliTokenRequest.name). */
export const MAX_TOKEN_NAME_CHARS = 200;
/** The recertification signal's `trigger`. */
export const MAX_TRIGGER_CHARS = 200;
/** A table name (or schema, or definition hash) of the recertification signal's `tables`. */
export const MAX_SIGNAL_NAME_CHARS = 1_024;

export interface TextTooLong {
  field: string;
  max: number;
  length: number;
  message: string;
}

/**
 * The characters of `text` as the contract's `maxLength` counts them (ajv: code points), so an emoji is one
 * character, not its two UTF-16 units; an unpaired surrogate counts one.
 */
export function characterCount(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    count++;
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
  }
  return count;
}

/** Whether `text` is longer than `max` characters (characterCount), counted only when it could be. */
export function longerThan(text: string, max: number): boolean {
  // UTF-16 units bound the characters from above.
  return text.length > max && characterCount(text) > max;
}

/** Why `value` of `field` is refused, or undefined when it is within `max` characters (characterCount). */
export function textTooLong(field: string, value: string, max: number): TextTooLong | undefined {
  if (!longerThan(value, max)) return undefined;
  const length = characterCount(value);
  return {
    field,
    max,
    length,
    message: `${field} is ${length.toLocaleString('en')} characters; at most ${max.toLocaleString('en')} are kept.`,
  };
}
