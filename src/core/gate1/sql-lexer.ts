// Reads a predicate's raw text the way PostgreSQL's lexer does (standard_conforming_strings on, the
// default since 9.1) BEFORE any parser sees it, and refuses every token that could let the text
// escape a `WHERE <predicate>` wrapper or be read differently by PostgreSQL and by other SQL readers (a
// person, an editor, another tool): backticks, which other SQL dialects read as quotes, and Unicode spaces,
// which PostgreSQL reads as letters.
import type { Finding } from './finding.js';

export const MAX_PREDICATE_LENGTH = 4000;

/** Spaces outside ASCII: PostgreSQL's lexer takes every non-ASCII character for part of an identifier. */
const UNICODE_SPACE = /[\u0085\u00a0\u1680\u180e\u2000-\u200b\u2028\u2029\u202f\u205f\u2060\u3000\ufeff]/;

export interface LexedPredicate {
  findings: Finding[];
  /** The raw contents of the string literals, as PostgreSQL delimits them, in source order. */
  stringLiterals: string[];
}

/** Records a refusal once per code: the first occurrence is enough to say what to change. */
function refuse(findings: Finding[], code: string, message: string, index: number): void {
  if (findings.some((f) => f.code === code)) return;
  findings.push({ code, severity: 'error', message, index });
}

/** Length of the run of backslashes ending just before `end`. */
function backslashRunBefore(text: string, end: number, start: number): number {
  let n = 0;
  while (end - 1 - n >= start && text[end - 1 - n] === '\\') n++;
  return n;
}

/** Scans a quoted token (`'…'` or `"…"`, the quote doubled inside) starting at `start`; returns the index after it, or -1. */
function scanQuoted(text: string, start: number, quote: string, findings: Finding[]): number {
  let i = start + 1;
  for (;;) {
    const close = text.indexOf(quote, i);
    if (close < 0) return -1;
    if (backslashRunBefore(text, close, start + 1) % 2 === 1) {
      refuse(
        findings,
        'sql-backslash-quote',
        `a backslash right before ${quote} is an ordinary character for PostgreSQL but an escape for other SQL readers, so they would disagree on where this ${quote === "'" ? 'string' : 'identifier'} ends; remove the backslash or put a space between it and the quote`,
        close - 1,
      );
    }
    if (text[close + 1] === quote) {
      i = close + 2;
      continue;
    }
    return close + 1;
  }
}

export function lexPredicate(text: string): LexedPredicate {
  const findings: Finding[] = [];
  const stringLiterals: string[] = [];
  if (text.length > MAX_PREDICATE_LENGTH) {
    refuse(
      findings,
      'sql-too-long',
      `the predicate is ${text.length} characters long; the limit is ${MAX_PREDICATE_LENGTH}, split it into several customPredicates`,
      MAX_PREDICATE_LENGTH,
    );
    return { findings, stringLiterals };
  }
  let depth = 0;
  let i = 0;
  while (i < text.length) {
    const c = text[i] ?? '';
    if (c === "'" || c === '"') {
      const prefix = text.slice(Math.max(0, i - 2), i);
      if (/[Ee]$/.test(prefix) && !/[A-Za-z0-9_]/.test(text[i - 2] ?? '')) {
        refuse(
          findings,
          'sql-escape-string',
          "E'…' escape strings are not allowed: their backslash escapes can hide quotes; write a plain '…' string and double any quote inside it",
          i - 1,
        );
      }
      if (/[Uu]&$/.test(prefix)) {
        refuse(
          findings,
          'sql-unicode-escape',
          'U&"…" and U&\'…\' Unicode escapes are not allowed: they can spell a name or a quote that the checks cannot see; write the characters themselves',
          i - 2,
        );
      }
      const end = scanQuoted(text, i, c, findings);
      if (end < 0) {
        refuse(
          findings,
          'sql-unterminated',
          c === "'"
            ? 'this string literal is never closed; add the closing quote'
            : 'this quoted identifier is never closed; add the closing "',
          i,
        );
        return { findings, stringLiterals };
      }
      if (c === "'") stringLiterals.push(text.slice(i + 1, end - 1));
      i = end;
      continue;
    }
    // `--` or `/*` (read by character: no string made for each position of the text)
    if ((c === '-' && text[i + 1] === '-') || (c === '/' && text[i + 1] === '*')) {
      refuse(
        findings,
        'sql-comment',
        'comments are not allowed in a predicate: they can hide the rest of the text from the checks; remove it and put explanations in the check name',
        i,
      );
      i += 2;
      continue;
    }
    if (c === ';') {
      refuse(
        findings,
        'sql-semicolon',
        'a semicolon ends a statement; a predicate is one boolean expression, so remove it',
        i,
      );
    } else if (c === '$') {
      refuse(
        findings,
        'sql-dollar',
        '"$" outside a string starts dollar quoting ($$…$$) or a parameter ($1); write string values as \'…\' instead',
        i,
      );
    } else if (c === '\\') {
      refuse(findings, 'sql-backslash', 'a backslash outside a string literal is not SQL; remove it', i);
    } else if (c === '(') {
      depth++;
    } else if (c === ')') {
      depth--;
      if (depth < 0) {
        refuse(
          findings,
          'sql-unbalanced',
          'this ")" closes a parenthesis the predicate never opened, which would end the surrounding WHERE clause; remove it',
          i,
        );
        depth = 0;
      }
    } else if (c === '`') {
      refuse(
        findings,
        'sql-backtick',
        'a backtick (`) is not a quote in PostgreSQL, which reads it as an operator character; quote a column name with double quotes ("Order Id") or write it bare',
        i,
      );
    } else if (UNICODE_SPACE.test(c)) {
      refuse(
        findings,
        'sql-unicode-space',
        `U+${c.codePointAt(0)?.toString(16).toUpperCase().padStart(4, '0')} (${c === '\u00a0' ? 'a non-breaking space' : 'a Unicode space'}) is not a space for PostgreSQL: it becomes part of the name or keyword beside it; type a plain space`,
        i,
      );
    } else if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(c)) {
      refuse(
        findings,
        'sql-control-character',
        'control characters are not allowed in a predicate; remove it',
        i,
      );
    }
    i++;
  }
  if (depth > 0) {
    refuse(findings, 'sql-unbalanced', `${depth} "(" never closed; add the missing ")"`, text.length);
  }
  return { findings, stringLiterals };
}
