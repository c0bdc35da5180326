// Reads a patternChecks regex the way PostgreSQL's ARE engine (the `~` operator) reads it, and flags
// what PostgreSQL rejects (error) or reads differently from the JavaScript/PCRE habit (warning).
// Verified against PostgreSQL 18 (PGlite) by test/core/gate1/regex-oracle.test.ts.

import type { Finding } from './finding.js';

/** A regex finding always knows its offset in the regex source. */
export type RegexProblem = Finding & { index: number };

/** PostgreSQL's limit on {m,n} bounds (RE_DUP_MAX). */
export const PG_MAX_REPEAT = 255;

const EMBEDDED_OPTIONS = new Set('bceimnpqstwx');
const POSIX_CLASSES = new Set([
  'alnum',
  'alpha',
  'ascii',
  'blank',
  'cntrl',
  'digit',
  'graph',
  'lower',
  'print',
  'punct',
  'space',
  'upper',
  'xdigit',
  'word',
]);

// The names PostgreSQL accepts for a collating element or equivalence class of more than one
// character ([[.hyphen.]], [[=space=]]): the POSIX character names, ASCII only (regc_locale.c).
const COLLATING_NAMES = new Map<string, number>([
  ...'NUL SOH STX ETX EOT ENQ ACK BEL BS HT LF VT FF CR SO SI DLE DC1 DC2 DC3 DC4 NAK SYN ETB CAN EM SUB ESC FS GS RS US'
    .split(' ')
    .map((name, code): [string, number] => [name, code]),
  ...(
    [
      ['alert', '\x07'],
      ['backspace', '\b'],
      ['tab', '\t'],
      ['newline', '\n'],
      ['vertical-tab', '\v'],
      ['form-feed', '\f'],
      ['carriage-return', '\r'],
      ['IS4', '\x1c'],
      ['IS3', '\x1d'],
      ['IS2', '\x1e'],
      ['IS1', '\x1f'],
      ['DEL', '\x7f'],
      ['space', ' '],
      ['exclamation-mark', '!'],
      ['quotation-mark', '"'],
      ['number-sign', '#'],
      ['dollar-sign', '$'],
      ['percent-sign', '%'],
      ['ampersand', '&'],
      ['apostrophe', "'"],
      ['left-parenthesis', '('],
      ['right-parenthesis', ')'],
      ['asterisk', '*'],
      ['plus-sign', '+'],
      ['comma', ','],
      ['hyphen', '-'],
      ['hyphen-minus', '-'],
      ['period', '.'],
      ['full-stop', '.'],
      ['slash', '/'],
      ['solidus', '/'],
      ['zero', '0'],
      ['one', '1'],
      ['two', '2'],
      ['three', '3'],
      ['four', '4'],
      ['five', '5'],
      ['six', '6'],
      ['seven', '7'],
      ['eight', '8'],
      ['nine', '9'],
      ['colon', ':'],
      ['semicolon', ';'],
      ['less-than-sign', '<'],
      ['equals-sign', '='],
      ['greater-than-sign', '>'],
      ['question-mark', '?'],
      ['commercial-at', '@'],
      ['left-square-bracket', '['],
      ['backslash', '\\'],
      ['reverse-solidus', '\\'],
      ['right-square-bracket', ']'],
      ['circumflex', '^'],
      ['circumflex-accent', '^'],
      ['underscore', '_'],
      ['low-line', '_'],
      ['grave-accent', '`'],
      ['left-brace', '{'],
      ['left-curly-bracket', '{'],
      ['vertical-line', '|'],
      ['right-brace', '}'],
      ['right-curly-bracket', '}'],
      ['tilde', '~'],
    ] as const
  ).map(([name, char]): [string, number] => [name, char.charCodeAt(0)]),
]);

const POSIX_ITEM: Record<string, string> = {
  '.': 'a collating element',
  '=': 'an equivalence class',
  ':': 'a character class',
};

const UNSUPPORTED_ESCAPES: Record<string, string> = {
  p: 'Unicode property escapes (\\p{…}) do not exist in PostgreSQL; use a POSIX class such as [[:alpha:]] or [[:digit:]]',
  P: 'Unicode property escapes (\\P{…}) do not exist in PostgreSQL; use a negated POSIX class such as [^[:alpha:]]',
  k: 'named back references (\\k<name>) do not exist in PostgreSQL; use a numbered back reference such as \\1',
  g: '\\g back references do not exist in PostgreSQL; use a numbered back reference such as \\1',
  h: '\\h does not exist in PostgreSQL; use [[:blank:]]',
  H: '\\H does not exist in PostgreSQL; use [^[:blank:]]',
  R: '\\R does not exist in PostgreSQL; use (\\r\\n|\\n|\\r)',
  z: '\\z does not exist in PostgreSQL; use \\Z, which there matches only at the very end of the string',
  Q: '\\Q…\\E quoting does not exist in PostgreSQL; escape each special character with a backslash',
  E: '\\Q…\\E quoting does not exist in PostgreSQL; escape each special character with a backslash',
  K: '\\K (keep out) does not exist in PostgreSQL; use a lookbehind (?<=…)',
  G: '\\G does not exist in PostgreSQL; anchor with ^ instead',
  X: '\\X (grapheme cluster) does not exist in PostgreSQL; use . or a bracket expression',
  N: '\\N does not exist in PostgreSQL; use [^\\n]',
  o: '\\o{…} octal escapes do not exist in PostgreSQL; use \\0nn or \\xhh',
};

type Atom = 'none' | 'quantifiable' | 'quantified' | 'constraint';
type EscapeKind = 'char' | 'class' | 'constraint' | 'backref' | 'invalid';
interface Group {
  capturing: boolean;
  lookaround: boolean;
}

class RegexScanner {
  readonly problems: RegexProblem[] = [];
  private i = 0;
  private expanded = false;
  private groupsClosed = 0;
  /** Capturing groups opened so far, closed or not (PostgreSQL's count for telling \12 from an octal escape). */
  private groupsOpened = 0;
  private readonly groups: Group[] = [];
  private last: Atom = 'none';

  constructor(private readonly src: string) {}

  scan(): RegexProblem[] {
    if (this.src.startsWith('***=')) return this.problems; // the rest is a literal string
    if (this.src.startsWith('***:')) this.i = 4;
    if (!this.leadingOptions()) return this.problems;
    while (this.i < this.src.length) this.step();
    for (const _ of this.groups)
      this.error('regex-unbalanced', 'a group "(" is never closed; add the missing ")"', this.src.length);
    return this.problems;
  }

  private error(code: string, message: string, index = this.i): void {
    this.problems.push({ code, severity: 'error', message, index });
  }

  private warn(code: string, message: string, index = this.i): void {
    this.problems.push({ code, severity: 'warning', message, index });
  }

  /** `(?xyz)` is allowed only at the very start. Returns false when the rest must not be scanned as ARE. */
  private leadingOptions(): boolean {
    const m = /^\(\?([A-Za-z]+)\)/.exec(this.src.slice(this.i));
    if (!m?.[1]) return true;
    const start = this.i;
    this.i += m[0].length;
    for (const letter of m[1]) {
      if (!EMBEDDED_OPTIONS.has(letter)) {
        this.error(
          'regex-embedded-option',
          `PostgreSQL has no embedded option "${letter}"; the options it knows are b c e i m n p q s t w x`,
          start,
        );
      }
    }
    if (m[1].includes('q')) return false; // (?q): the rest is a literal string
    if (/[be]/.test(m[1])) {
      this.warn(
        'regex-flavour',
        '(?b)/(?e) switch PostgreSQL to basic/extended regex syntax, which reads escapes and groups differently; drop the option and write an advanced regex',
        start,
      );
      return false;
    }
    if (m[1].includes('m')) {
      this.warn(
        'regex-option-m',
        "(?m) in PostgreSQL means newline-sensitive matching: besides ^ and $ matching at line breaks, '.' and bracket expressions stop matching newlines; write (?w) if you only want ^ and $ at line breaks",
        start,
      );
    }
    if (m[1].includes('x')) this.expanded = true;
    return true;
  }

  private step(): void {
    const c = this.src[this.i] ?? '';
    if (this.expanded && /\s/.test(c)) {
      this.i++;
      return;
    }
    if (this.expanded && c === '#') {
      while (this.i < this.src.length && this.src[this.i] !== '\n') this.i++;
      return;
    }
    switch (c) {
      case '\\':
        this.atomFromEscape();
        return;
      case '[':
        // [[:<:]] and [[:>:]]: PostgreSQL's start and end of a word (\m, \M), not a bracket expression.
        if (this.src.startsWith('[[:<:]]', this.i) || this.src.startsWith('[[:>:]]', this.i)) {
          this.i += 7;
          this.last = 'constraint';
          return;
        }
        this.bracket();
        this.last = 'quantifiable';
        return;
      case '(':
        this.openGroup();
        return;
      case ')':
        this.closeGroup();
        return;
      case '|':
        this.i++;
        this.last = 'none';
        return;
      case '^':
      case '$':
        this.i++;
        this.last = 'constraint';
        return;
      case '*':
      case '+':
      case '?':
        this.quantifier(1);
        return;
      case '{':
        if (/\d/.test(this.src[this.i + 1] ?? '')) {
          this.quantifier(this.bound());
          return;
        }
        break;
    }
    this.i++;
    this.last = 'quantifiable';
  }

  /** Parses `{m}`, `{m,}` or `{m,n}` at this.i and returns its length (0 when malformed). */
  private bound(): number {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.i));
    if (!m) {
      this.error(
        'regex-bound',
        'a "{" followed by a digit starts a repetition bound that is never closed; write {m}, {m,} or {m,n}',
      );
      return 0;
    }
    const lo = Number(m[1]);
    const hi = m[3] ? Number(m[3]) : lo;
    if (lo > PG_MAX_REPEAT || hi > PG_MAX_REPEAT) {
      this.error(
        'regex-repeat-too-large',
        `PostgreSQL refuses repetition counts above ${PG_MAX_REPEAT}; use a smaller bound or + / *`,
      );
    } else if (lo > hi) {
      this.error('regex-bound', `the bound {${lo},${hi}} has its minimum above its maximum; swap them`);
    }
    return m[0].length;
  }

  private quantifier(length: number): void {
    if (length === 0) {
      this.i++;
      this.last = 'quantifiable';
      return;
    }
    const start = this.i;
    if (this.last === 'none' || this.last === 'constraint') {
      this.error(
        'regex-quantifier-operand',
        'this quantifier has nothing to repeat (it follows "(", "|", an anchor, a lookaround or the start); escape it with a backslash if you mean the character',
        start,
      );
    } else if (this.last === 'quantified') {
      const possessive = this.src[start] === '+';
      this.error(
        possessive ? 'regex-possessive' : 'regex-quantifier-operand',
        possessive
          ? 'possessive quantifiers (*+, ++, ?+, {n}+) do not exist in PostgreSQL; drop the trailing +'
          : 'a quantifier cannot follow another quantifier in PostgreSQL; wrap the first in (?:…) if you mean to repeat it',
        start,
      );
    }
    this.i += length;
    if (this.src[this.i] === '?') this.i++; // non-greedy marker
    this.last = 'quantified';
  }

  private openGroup(): void {
    const start = this.i;
    const rest = this.src.slice(this.i);
    const insideLookaround = this.groups.some((g) => g.lookaround);
    if (!rest.startsWith('(?')) {
      this.i++;
      this.groups.push({ capturing: !insideLookaround, lookaround: false });
      if (!insideLookaround) this.groupsOpened++;
      this.last = 'none';
      return;
    }
    if (rest.startsWith('(?#')) {
      const end = this.src.indexOf(')', this.i);
      this.i = end < 0 ? this.src.length : end + 1;
      return;
    }
    const look = /^\(\?(=|!|<=|<!)/.exec(rest);
    const plain = rest.startsWith('(?:');
    if (look || plain) {
      this.i += look ? look[0].length : 3;
      this.groups.push({ capturing: false, lookaround: Boolean(look) });
      this.last = 'none';
      return;
    }
    if (/^\(\?(<|P<|')/.test(rest)) {
      this.error(
        'regex-named-group',
        'named groups (?<name>…) do not exist in PostgreSQL; use a plain group (…) and refer to it by number',
        start,
      );
    } else if (rest.startsWith('(?>')) {
      this.error(
        'regex-atomic-group',
        'atomic groups (?>…) do not exist in PostgreSQL; use a plain group (?:…)',
        start,
      );
    } else if (/^\(\?[A-Za-z-]*\)/.test(rest)) {
      this.error(
        'regex-embedded-option',
        'embedded options such as (?i) are allowed only at the very start of a PostgreSQL regex; move it to the front',
        start,
      );
      this.i = this.src.indexOf(')', this.i) + 1;
      return;
    } else if (/^\(\?[A-Za-z-]+:/.test(rest)) {
      this.error(
        'regex-embedded-option',
        'scoped options such as (?i:…) do not exist in PostgreSQL; put (?i) at the very start to apply it to the whole regex',
        start,
      );
    } else {
      this.error(
        'regex-group-syntax',
        `PostgreSQL does not know the group syntax "${rest.slice(0, 3)}"`,
        start,
      );
    }
    const close = /[:>')]/.exec(rest.slice(2));
    this.i += 2 + (close && close[0] !== ')' ? close.index + 1 : 0);
    this.groups.push({ capturing: false, lookaround: false });
    this.last = 'none';
  }

  private closeGroup(): void {
    const group = this.groups.pop();
    if (!group) {
      this.error('regex-unbalanced', 'this ")" closes no group; remove it or escape it as \\)');
      this.i++;
      return;
    }
    this.i++;
    if (group.capturing) this.groupsClosed++;
    this.last = group.lookaround ? 'constraint' : 'quantifiable';
  }

  private atomFromEscape(): void {
    const kind = this.escape(false);
    this.last = kind === 'constraint' ? 'constraint' : 'quantifiable';
  }

  /** Reads one escape at this.i (the backslash) and returns what it stands for. */
  private escape(inBracket: boolean): EscapeKind {
    const start = this.i;
    const c = this.src[this.i + 1];
    this.i += 2;
    if (c === undefined) {
      this.error(
        'regex-escape',
        'the regex ends with a lone backslash; double it (\\\\) to match a backslash',
        start,
      );
      return 'invalid';
    }
    if (!/[A-Za-z0-9]/.test(c)) return 'char';
    const unsupported = UNSUPPORTED_ESCAPES[c];
    if (unsupported) {
      this.error(c === 'p' || c === 'P' ? 'regex-unicode-property' : 'regex-escape', unsupported, start);
      return 'invalid';
    }
    if ('aefnrtv'.includes(c)) return 'char';
    if ('dswDSW'.includes(c)) return 'class';
    switch (c) {
      case 'b':
        if (!inBracket) {
          this.warn(
            'regex-backslash-b',
            '\\b means a backspace character in PostgreSQL, not a word boundary; use \\y (or \\m and \\M for the start and end of a word)',
            start,
          );
        }
        return 'char';
      case 'B':
        this.warn(
          'regex-backslash-capital-b',
          '\\B means a literal backslash in PostgreSQL, not a non-word-boundary; use \\Y for a non-word-boundary or \\\\ for a backslash',
          start,
        );
        return 'char';
      case 'c':
        if (this.i >= this.src.length) {
          this.error('regex-escape', '\\c must be followed by a character (\\cX is control-X)', start);
          return 'invalid';
        }
        this.i += (this.src.codePointAt(this.i) ?? 0) > 0xffff ? 2 : 1;
        return 'char';
      case 'u':
      case 'U':
        return this.hexEscape(start, c === 'u' ? 4 : 8);
      case 'x':
        return this.hexEscapeX(start);
      case '0':
        this.i += /^[0-7]{0,2}/.exec(this.src.slice(this.i))?.[0].length ?? 0;
        return 'char';
    }
    if (/[1-9]/.test(c)) return this.backReference(start, inBracket);
    if ('AZmMyY'.includes(c)) {
      if (inBracket) {
        this.error(
          'regex-escape',
          `\\${c} is a constraint and cannot appear inside a bracket expression [ ]`,
          start,
        );
        return 'invalid';
      }
      if (c === 'Z') {
        this.warn(
          'regex-backslash-capital-z',
          '\\Z in PostgreSQL matches only at the very end of the string (PCRE also accepts a final newline; JavaScript reads a literal Z); use $ if that is what you mean',
          start,
        );
      }
      return 'constraint';
    }
    this.error(
      'regex-escape',
      `\\${c} is not an escape PostgreSQL knows; remove the backslash or use a bracket expression`,
      start,
    );
    return 'invalid';
  }

  private hexEscape(start: number, digits: number): EscapeKind {
    const hex = new RegExp(`^[0-9A-Fa-f]{${digits}}`).exec(this.src.slice(this.i));
    if (!hex) {
      const letter = this.src[start + 1];
      this.error(
        'regex-escape',
        this.src[this.i] === '{'
          ? `\\${letter}{…} code point escapes do not exist in PostgreSQL; write \\${letter} followed by exactly ${digits} hex digits`
          : `\\${letter} needs exactly ${digits} hex digits in PostgreSQL`,
        start,
      );
      return 'invalid';
    }
    this.i += digits;
    return 'char';
  }

  private hexEscapeX(start: number): EscapeKind {
    const hex = /^[0-9A-Fa-f]+/.exec(this.src.slice(this.i));
    if (!hex) {
      this.error(
        'regex-escape',
        this.src[this.i] === '{'
          ? '\\x{…} escapes do not exist in PostgreSQL; write \\x followed by the hex digits, e.g. \\x41'
          : '\\x must be followed by hex digits in PostgreSQL',
        start,
      );
      return 'invalid';
    }
    if (hex[0].length > 2) {
      this.warn(
        'regex-hex-escape',
        `PostgreSQL reads every hex digit after \\x, so \\x${hex[0]} is one character, not \\x${hex[0].slice(0, 2)} followed by "${hex[0].slice(2)}"; use a bracket [\\x${hex[0].slice(0, 2)}] to end the escape`,
        start,
      );
    }
    this.i += hex[0].length;
    return 'char';
  }

  private backReference(start: number, inBracket: boolean): EscapeKind {
    const digits = /^\d*/.exec(this.src.slice(this.i))?.[0] ?? '';
    const all = (this.src[start + 1] ?? '') + digits;
    const n = Number(all);
    // More than one digit and more than the groups opened so far: PostgreSQL reads an octal escape of at most
    // three octal digits (two when three would pass 0xFF), the digits after it plain characters.
    if (digits.length > 0 && n > this.groupsOpened) {
      const octal = /^[0-7]{1,3}/.exec(all)?.[0];
      if (octal === undefined) {
        this.error(
          'regex-escape',
          `\\${all} is neither a back reference (only ${this.groupsOpened} groups before it) nor an octal escape (8 and 9 are no octal digits)`,
          start,
        );
        this.i = start + 2;
        return 'invalid';
      }
      this.i = start + 1 + (Number.parseInt(octal, 8) > 0xff ? octal.length - 1 : octal.length);
      return 'char';
    }
    this.i += digits.length;
    if (inBracket) {
      this.error(
        'regex-backreference',
        'back references cannot appear inside a bracket expression [ ]',
        start,
      );
      return 'invalid';
    }
    if (this.groups.some((g) => g.lookaround)) {
      this.error(
        'regex-backreference',
        'PostgreSQL does not allow back references inside a lookahead or lookbehind',
        start,
      );
      return 'invalid';
    }
    if (n > this.groupsClosed) {
      this.error(
        'regex-backreference',
        `\\${n} refers to capturing group ${n}, but only ${this.groupsClosed} closed before it (groups inside lookarounds do not capture in PostgreSQL)`,
        start,
      );
      return 'invalid';
    }
    return 'backref';
  }

  private bracket(): void {
    const start = this.i;
    this.i++;
    if (this.src[this.i] === '^') this.i++;
    let first = true;
    while (this.i < this.src.length) {
      const c = this.src[this.i];
      if (c === ']' && !first) {
        this.i++;
        return;
      }
      first = false;
      const lo = this.bracketItem();
      if (!lo) return;
      if (this.dashStartsRange()) {
        const dash = this.i;
        this.i++;
        const hi = this.bracketItem();
        if (!hi) return;
        if (lo.kind !== 'char' || hi.kind !== 'char') {
          this.error(
            'regex-range',
            'a range cannot start or end with a class such as \\d or [:alpha:]; list the class and the characters separately',
            dash,
          );
        } else if (lo.code !== undefined && hi.code !== undefined && lo.code > hi.code) {
          this.error(
            'regex-range',
            'this range runs backwards (its start is above its end); swap its ends',
            dash,
          );
        }
        if (this.dashStartsRange()) {
          this.error(
            'regex-range',
            'a "-" right after a range starts no new range in PostgreSQL; escape it (\\-) or put it last, before the "]"',
          );
        }
      }
    }
    this.error('regex-unbalanced', 'a bracket expression "[" is never closed; add the missing "]"', start);
  }

  /** Whether a "-" at this.i inside a bracket is a range's, not a literal one before the closing "]". */
  private dashStartsRange(): boolean {
    return this.src[this.i] === '-' && this.src[this.i + 1] !== ']' && this.i + 1 < this.src.length;
  }

  /** One item of a bracket expression; undefined when an opened [. [= or [: never closes (already reported). */
  private bracketItem(): { kind: 'char' | 'class'; code?: number } | undefined {
    const rest = this.src.slice(this.i);
    const opener = /^\[([:.=])/.exec(rest);
    if (opener) {
      const kind = opener[1] ?? '';
      const close = rest.indexOf(`${kind}]`, 2);
      if (close < 0) {
        this.error(
          'regex-unbalanced',
          `"[${kind}" inside a bracket expression opens ${POSIX_ITEM[kind]} that is never closed with "${kind}]"; write "\\[" for a literal [ there`,
        );
        this.i = this.src.length;
        return undefined;
      }
      const name = rest.slice(2, close);
      const at = this.i;
      this.i += close + 2;
      if (kind === ':') {
        if (!POSIX_CLASSES.has(name))
          this.error('regex-posix-class', `[:${name}:] is not a character class PostgreSQL knows`, at);
        return { kind: 'class' };
      }
      const code = [...name].length === 1 ? name.codePointAt(0) : COLLATING_NAMES.get(name);
      if (code === undefined)
        this.error(
          'regex-collating-element',
          `[${kind}${name}${kind}] is not a collating element PostgreSQL knows: write one character, or a POSIX character name such as [${kind}hyphen${kind}]`,
          at,
        );
      return kind === '=' ? { kind: 'class' } : { kind: 'char', code };
    }
    if (rest.startsWith('\\')) {
      const escapeStart = this.i;
      const kind = this.escape(true);
      const decoded = kind === 'char' ? decodeSimpleEscape(this.src.slice(escapeStart, this.i)) : undefined;
      return { kind: kind === 'class' ? 'class' : 'char', code: decoded };
    }
    const cp = rest.codePointAt(0) ?? 0;
    this.i += cp > 0xffff ? 2 : 1;
    return { kind: 'char', code: cp };
  }
}

/** The character codes of the one-letter escapes that stand for a character (\B is a backslash). */
const CHARACTER_ESCAPES: Readonly<Record<string, number>> = {
  a: 7,
  b: 8,
  t: 9,
  n: 10,
  v: 11,
  f: 12,
  r: 13,
  e: 27,
  B: 92,
};

function decodeSimpleEscape(escape: string): number | undefined {
  const c = escape[1] ?? '';
  if (!/[A-Za-z0-9]/.test(c)) return c.codePointAt(0);
  if (escape.length === 2 && Object.hasOwn(CHARACTER_ESCAPES, c)) return CHARACTER_ESCAPES[c];
  // \cX: the character of X's low five bits.
  if (c === 'c' && [...escape].length === 3) return (escape.codePointAt(2) ?? 0) & 0x1f;
  // \0, \0dd, and inside a bracket \dd or \ddd: octal.
  if (/^\\[0-7]+$/.test(escape) && (c === '0' || escape.length > 2))
    return Number.parseInt(escape.slice(1), 8);
  if (/^\\[xuU][0-9A-Fa-f]+$/.test(escape)) return Number.parseInt(escape.slice(2), 16);
  return undefined;
}

/** Checks one regex as PostgreSQL's `~` would read it. An empty list means PostgreSQL accepts it as written. */
export function checkRegex(source: string): RegexProblem[] {
  return new RegexScanner(source).scan();
}
