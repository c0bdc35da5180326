// Text that did not come from us (server strings, file contents, user input echoed back) passes through
// here before it reaches a terminal, so it cannot move the cursor, retitle the window, write the
// clipboard (OSC 52) or hide what follows. Whole escape sequences go first so their parameters do not
// linger as noise; then every remaining C0/C1 control character except \n and \t; then the Unicode
// format characters (bidi overrides and isolates, which reorder what is shown — "Trojan Source" —, zero
// width spaces, BOMs, tags) and the line/paragraph separators. Zero width (non-)joiners stay: emoji and
// Persian or Indic text need them, and they move nothing.
//
// A string sequence (OSC, DCS, SOS, PM, APC) goes whole only up to its end (BEL or ST) on the same line.
// One left open goes with the rest of its line when it starts with ESC; when it starts with a lone 8-bit
// introducer (U+0090, U+0098, U+009D, U+009E, U+009F) only that character goes, with the other C1 controls:
// cp1252 text read as latin1 holds them ("ž" is U+009E), and the text after them is the data, never the
// rest of the whole text.

// The patterns are made at the first call, not as the module loads: a command that strips nothing (`list
// --json`) does not build them (-0.3 ms of its start; part of what keeps it under 2.0x `node -e 0`).
export function stripControlCharacters(text: string): string {
  return withoutStringSequences(text)
    .replace(/(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?/g, '') // CSI sequences
    .replace(/\x1b[\x20-\x2f]*[\x30-\x7e]?/g, '') // other escapes
    .replace(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g, '') // C0 and C1 controls but \n and \t
    .replace(/(?![\u200c\u200d])[\p{Cf}\u2028\u2029]/gu, ''); // format characters, line/paragraph separators
}

/**
 * `text` without its OSC, DCS, SOS, PM and APC strings: each from its introducer to its BEL or ST on the same
 * line; one left open to the end of its line when ESC starts it, and kept (its lone introducer goes with the
 * C1 controls) when an 8-bit introducer does. In one pass: the next end found is kept for the introducers
 * before it, so a line of a thousand open introducers is not searched a thousand times.
 */
function withoutStringSequences(text: string): string {
  const introducer = /\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]/g;
  const end = /\x07|\x1b\\|\x9c|\n/g;
  let kept = '';
  let from = 0;
  /** The first end (or line break) at or after the last introducer searched from, and where it stops. */
  let endAt = -1;
  let endStop = -1;
  for (let found = introducer.exec(text); found !== null; found = introducer.exec(text)) {
    const start = found.index;
    if (endAt < introducer.lastIndex) {
      end.lastIndex = introducer.lastIndex;
      const ending = end.exec(text);
      endAt = ending?.index ?? text.length;
      endStop = ending === null || ending[0] === '\n' ? -1 : endAt + ending[0].length;
    }
    const to = endStop >= 0 ? endStop : found[0].length === 2 ? endAt : -1;
    if (to < 0) continue;
    kept += text.slice(from, start);
    from = to;
    introducer.lastIndex = to;
  }
  return from === 0 ? text : kept + text.slice(from);
}

/** A character onOneLine may change (a zero width joiner it keeps is one too): made at the first call. */
let mayChange: RegExp | undefined;

/**
 * `text` on one line, for a service's string put on a line of gds's own (`Table:  orders`, `Signed in as …`, a
 * table cell): each run of its line breaks and line or paragraph separators (\n, \r, \v, \f, NEL, U+2028,
 * U+2029) reads as one space, and the rest is as `stripControlCharacters` leaves it. So no string starts a
 * line that looks like the next one of gds's (`orders\nState:  CERTIFIED`, `x\u2028✓ Certified`), and words a
 * separator divides stay apart (`a\rb` is `a b`, not `ab`). The separators become line breaks before the
 * stripping, which ends an escape sequence left open at the end of its line, as it would at a \n.
 */
export function onOneLine(text: string): string {
  // Most strings hold nothing either step changes (a table's cells: 600,000 of them 187 -> 43 ms).
  mayChange ??= /[\x00-\x08\x0a-\x1f\x7f-\x9f\p{Cf}\u2028\u2029]/u;
  if (!mayChange.test(text)) return text;
  return stripControlCharacters(text.replace(/[\r\v\f\u0085\u2028\u2029]/g, '\n')).replace(/\n+/g, ' ');
}

/**
 * Text of several lines that gds wrote itself (an error's list of candidates, a suggestion of three commands):
 * its line breaks are gds's, and each line is on one line as `onOneLine` makes it, so a service's string inside
 * one cannot start another. Output's one-line methods (info, warn, error) put every plain string on one line;
 * this is the one way to say more than one, and `lines` the one way to make it.
 */
export class Lines {
  readonly lines: readonly string[];

  constructor(lines: readonly string[]) {
    this.lines = lines.map(onOneLine);
  }

  /** Each line changed by `change` (masking the run's secrets), still one line each. */
  map(change: (line: string) => string): Lines {
    return new Lines(this.lines.map(change));
  }

  toString(): string {
    return this.lines.join('\n');
  }
}

/**
 * Tagged template of gds's own lines: ``lines`${n} tables are named ${name}:\n${rows}` `` keeps the template's
 * line breaks, puts each interpolated string on one line, and each string of an interpolated array on a line
 * of its own.
 */
export function lines(
  template: TemplateStringsArray,
  ...values: ReadonlyArray<string | number | readonly string[]>
): Lines {
  // The values hold no line break once on one line: every \n left is the template's or between an array's strings.
  const text = template.reduce((said, part, n) => {
    const value = values[n - 1];
    const shown = typeof value === 'object' ? value.map(onOneLine).join('\n') : onOneLine(String(value));
    return `${said}${shown}${part}`;
  });
  return new Lines(text.split('\n'));
}

/**
 * A service's message as a person reads it: one line (`onOneLine`), but for the caret block PostgreSQL puts in
 * an SQL error (`LINE 1: SELECT * FORM t` and, under it, spaces and a `^` at the word it stopped at), which only
 * makes sense on lines of its own. That block follows the line, each of its lines indented by two spaces, so
 * neither can read as a line of gds's (nor the caret be lost between words).
 */
export function serviceMessageLines(message: string): Lines {
  // Each separator (CR LF, CR, VT, FF, NEL, U+2028, U+2029) a \n, and no other control character.
  const text = stripControlCharacters(message.replace(/\r\n?|[\v\f\u0085\u2028\u2029]/g, '\n'));
  const block = /\n[ \t]*(LINE \d+: [^\n]*)\n([ \t]*\^)[ \t]*(?=\n|$)/.exec(text);
  if (block === null) return new Lines([onOneLine(message)]);
  const [, sql = '', caret = ''] = block;
  const rest = onOneLine(
    `${text.slice(0, block.index)}\n${text.slice(block.index + block[0].length)}`,
  ).trim();
  return new Lines([rest, `  ${sql}`, `  ${caret}`]);
}
