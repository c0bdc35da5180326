// Text that did not come from us (server strings, file contents, user input echoed back) passes through
// here before it reaches a terminal, so it cannot move the cursor, retitle the window, write the
// clipboard (OSC 52) or hide what follows. Whole escape sequences go first so their parameters do not
// linger as noise; then every remaining C0/C1 control character except \n and \t; then the Unicode
// format characters (bidi overrides and isolates, which reorder what is shown — "Trojan Source" —, zero
// width spaces, BOMs, tags) and the line/paragraph separators. Zero width (non-)joiners stay: emoji and
// Persian or Indic text need them, and they move nothing.

// The patterns are made at the first call, not as the module loads: a command that strips nothing (`list
// --json`) does not build them (-0.3 ms of its start; part of what keeps it under 2.0x `node -e 0`).
export function stripControlCharacters(text: string): string {
  return text
    .replace(/(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[\s\S]*?(?:\x07|\x1b\\|\x9c|$)/g, '') // OSC, DCS, SOS, PM, APC strings
    .replace(/(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?/g, '') // CSI sequences
    .replace(/\x1b[\x20-\x2f]*[\x30-\x7e]?/g, '') // other escapes
    .replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g, '') // C0 and C1 controls but \n and \t
    .replace(/(?![\u200c\u200d])[\p{Cf}\u2028\u2029]/gu, ''); // format characters, line/paragraph separators
}
