// What a user typed, said back in a message: an argument, a flag's value, a file name, a setting's value. It
// is shown stripped of control characters (it reaches a terminal) and cut at 80 characters, so a 100 KB
// argument (a pasted file, a runaway variable) names itself in one line instead of flooding the terminal or a
// CI log. Lists of names to choose from are cut at 10 the same way. The text sent or stored is never cut:
// only what is said back.
import { stripControlCharacters } from './terminal-text.js';

/** At most this many characters of a text said back (the last one `…` when cut). */
export const ECHO_MAX_CHARS = 80;
/** At most this many names of a list said back, then `… and N more`. */
export const ECHO_MAX_NAMES = 10;

/** `text` as said back: control characters stripped, at most 80 characters (cut ones end with `…`). */
export function echoed(text: string): string {
  const shown = stripControlCharacters(text);
  if (shown.length <= ECHO_MAX_CHARS) return shown;
  // By code point, so a cut never splits a surrogate pair; a long text is not split whole.
  const chars = Array.from(shown.slice(0, ECHO_MAX_CHARS * 2 + 1));
  return chars.length <= ECHO_MAX_CHARS ? shown : `${chars.slice(0, ECHO_MAX_CHARS - 1).join('')}…`;
}

/** `text` said back in double quotes with JSON's escapes (a quote, a tab, a line break), cut as `echoed` cuts. */
export function quotedEcho(text: string): string {
  return JSON.stringify(echoed(text));
}

/** `names` joined with `, `, each `echoed`: at most 10, then `… and N more`. */
export function echoedList(names: readonly string[], separator = ', '): string {
  const shown = names.slice(0, ECHO_MAX_NAMES).map(echoed);
  const more = names.length - shown.length;
  return more > 0 ? `${shown.join(separator)}${separator}… and ${more} more` : shown.join(separator);
}
