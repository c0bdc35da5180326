// A word of a command line gds prints for the person to run (the next page's `records list --cursor …`, a
// `gds tokens issue …` to renew a profile): as it is when the shell reads it as it is, else in single
// quotes. Values from the service go into such lines, and a cursor or an id holding `;`, `$(…)` or a
// space must not become another command when the line is pasted.
//
// A value holding a control or format character (a line break, an escape, a bidi override) is written in
// ANSI-C quotes, `$'a\nb'`, each such character as its escape: in single quotes a line break would split the
// printed line in two (or read as a space once the line is put on one), and the pasted word would not be the
// name. bash, zsh and ksh read `$'…'`; fish and PowerShell do not, and gds prints POSIX shell lines only.
export function shellWord(value: string): string {
  // not at the start, `=`: zsh reads `=ls` as the path of ls
  if (/^[\w.:,@/%+-][\w.:,@/%+=-]*$/.test(value)) return value;
  if (!/[\p{Cc}\p{Cf}\u2028\u2029]/u.test(value)) return `'${value.replaceAll("'", "'\\''")}'`;
  return `$'${value.replace(/[\\'\p{Cc}\p{Cf}\u2028\u2029]/gu, ansiCEscape)}'`;
}

const NAMED_ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  "'": "\\'",
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

/**
 * `character` inside `$'…'`: a named escape, else `\xHH` below U+0080, `\uHHHH` to U+FFFF and `\UHHHHHHHH` past
 * it (a tag character): \u reads at most four hex digits, so U+E0041 as `\ue0041` would be U+E004 and a `1`.
 */
function ansiCEscape(character: string): string {
  const named = NAMED_ESCAPES[character];
  if (named !== undefined) return named;
  const code = character.codePointAt(0) ?? 0;
  if (code < 0x80) return `\\x${code.toString(16).padStart(2, '0')}`;
  if (code <= 0xffff) return `\\u${code.toString(16).padStart(4, '0')}`;
  return `\\U${code.toString(16).padStart(8, '0')}`;
}
