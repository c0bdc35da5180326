// What a user typed, said back in a message: an argument, a flag's value, a file name, a setting's value. It
// is shown stripped of control characters (it reaches a terminal), its line breaks and tabs written as `\n` and
// `\t` (a pasted file stays on one line), and cut at 80 characters, so a 100 KB argument (a pasted
// file, a runaway variable) names itself in one line instead of flooding the terminal or a CI log. A path is
// cut at its start, so its file name stays; a URL at its end, so its scheme and host stay (a long host whole).
// What is cut has the secrets of the run (core/redact.ts) and every token masked first: a cut part of one is
// a part no later mask knows. Lists of names to choose from are cut at 10 the same way. The text sent or
// stored is never cut: only what is said back, the `details` of a --json error line among it.
import { redactSecrets, secretsOfRun } from './redact.js';
import { stripControlCharacters } from './terminal-text.js';

/** At most this many characters of a text said back (the cut one's `…` among them). */
export const ECHO_MAX_CHARS = 80;
/** At most this many names of a list said back, then `… and N more`. */
export const ECHO_MAX_NAMES = 10;

const ESCAPED_BREAKS: Record<string, string> = { '\n': '\\n', '\t': '\\t' };

/** `text` as said back: control characters stripped, breaks escaped, at most 80 characters (cut: `…` last). */
export function echoed(text: string): string {
  return cutEnd(oneLine(text));
}

/** A path said back as `echoed` says a text, but cut at its start (`…/exports/customers.ndjson`). */
export function echoedPath(path: string): string {
  return cutStart(oneLine(path));
}

/**
 * At most this many characters of a URL said back: a request's URL (its host, and its path naming the call) is
 * whole in practice, where 80 cut the path of many; a runaway base URL is still one line's worth.
 */
export const URL_ECHO_MAX_CHARS = 200;

/**
 * A URL said back as `echoed` says a text, but cut at URL_ECHO_MAX_CHARS, at its end so that its scheme and
 * host stay. Its password and the secrets of its query are masked before the cut: a cut through a secret
 * would leave a part no mask knows.
 */
export function echoedUrl(url: string): string {
  return cutEnd(oneLine(redactSecrets(url, secretsOfRun())), URL_ECHO_MAX_CHARS);
}

/** The longest DNS name: a host up to this long is said back whole, alone or in a URL (its path cut instead). */
export const DNS_NAME_MAX_CHARS = 253;

/**
 * A host said back (`host[:port]`): whole when its name is a DNS name's length (up to DNS_NAME_MAX_CHARS), so
 * that it names the service (NO_PROXY needs it as it is); a longer one is no DNS name, cut at
 * URL_ECHO_MAX_CHARS.
 */
export function echoedHost(host: string): string {
  const shown = oneLine(host);
  return isDnsNameLength(shown.replace(/:\d*$/, '')) ? shown : cutEnd(shown, URL_ECHO_MAX_CHARS);
}

function isDnsNameLength(hostname: string): boolean {
  return hostname.length <= DNS_NAME_MAX_CHARS;
}

/** Keys of `details` whose values are paths (cut at their start) even when relative (`exports/rows.ndjson`). */
const PATH_KEYS = new Set(['file', 'path', 'output', 'part', 'input', 'lock']);
/** A path by its shape: from the root, a drive, the home folder or `.`/`..`, on one line. */
const PATH_SHAPE = /^(?:[A-Za-z]:|~|\.{1,2})?[\\/][^\n]*$/;

/**
 * At most this many characters of a string in a --json error's `details`: more than a message says back, as a
 * script reads them (a URL, a diagnostic, a name are whole in practice), but a runaway value no longer makes
 * the line as long as itself.
 */
export const DETAILS_MAX_CHARS = 500;

/**
 * The `details` of a --json error line with each string longer than DETAILS_MAX_CHARS cut (a 50,000-character
 * --tables value, a path at its start, a URL at its end, its secrets masked first), whatever its depth; the
 * shape, numbers and shorter strings kept. Characters are not stripped: JSON escapes them.
 */
export function echoedDetails(value: unknown, key = ''): unknown {
  if (typeof value === 'string') {
    if (value.length <= DETAILS_MAX_CHARS) return value;
    // By the value's shape: a URL under any key (`reason`, `location`) keeps its host, a path its file name.
    if (urlOrigin(value) === undefined && (PATH_KEYS.has(key) || PATH_SHAPE.test(value)))
      return cutStart(value, DETAILS_MAX_CHARS);
    return cutEnd(value, DETAILS_MAX_CHARS);
  }
  if (Array.isArray(value)) return value.map((item: unknown) => echoedDetails(item, key));
  if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== Object.prototype)
    return value;
  return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, echoedDetails(item, name)]));
}

/** `message` (a system's, naming `path` whole: ENAMETOOLONG of a 100 KB name) with `path` said back as `echoedPath`. */
export function withPathEchoed(message: string, path: string): string {
  return message.replaceAll(path, echoedPath(path));
}

/** `text` said back in double quotes with JSON's escapes (a quote, a tab, a line break), cut as `echoed` cuts. */
export function quotedEcho(text: string): string {
  return JSON.stringify(cutEnd(stripControlCharacters(text)));
}

/** `names` joined with `, `, each `echoed`: at most 10, then `… and N more`. */
export function echoedList(names: readonly string[], separator = ', '): string {
  const shown = names.slice(0, ECHO_MAX_NAMES).map(echoed);
  const more = names.length - shown.length;
  return more > 0 ? `${shown.join(separator)}${separator}… and ${more} more` : shown.join(separator);
}

function oneLine(text: string): string {
  return stripControlCharacters(text).replace(/[\n\t]/g, (c) => ESCAPED_BREAKS[c] ?? '');
}

/**
 * `text`, to be cut, with the secrets of the run and every token the patterns of redact.ts know masked first:
 * a cut through a secret would leave a part (`opaqu…`) that the mask of the output no longer knows.
 */
function maskedBeforeCut(text: string): string {
  return redactSecrets(text, secretsOfRun());
}

function cutStart(text: string, max = ECHO_MAX_CHARS): string {
  if (text.length <= max) return text;
  const shown = maskedBeforeCut(text);
  // By code point, so a cut never splits a surrogate pair.
  const chars = Array.from(shown.slice(-(max * 2 + 1)));
  return chars.length <= max ? shown : `…${chars.slice(-(max - 1)).join('')}`;
}

/**
 * `text` cut at its end to `max` characters. A URL whose scheme and host (its origin) do not fit is cut at
 * URL_ECHO_MAX_CHARS instead (`max` when more), or right after its origin when that is longer and its host a
 * DNS name's length (up to 253 characters): the host whole, so that it still names the service meant, and its
 * path and query cut.
 */
function cutEnd(text: string, max = ECHO_MAX_CHARS): string {
  if (text.length <= max) return text;
  const shown = maskedBeforeCut(text);
  const limit = urlCutLimit(shown, max);
  // By code point, so a cut never splits a surrogate pair; a long text is not split whole.
  const chars = Array.from(shown.slice(0, limit * 2 + 1));
  return chars.length <= limit ? shown : `${chars.slice(0, limit - 1).join('')}…`;
}

/** Where cutEnd cuts `text` (a URL keeps its origin whole, and the character after it: `https://host/…`). */
function urlCutLimit(text: string, max: number): number {
  const origin = urlOrigin(text);
  if (origin === undefined || origin.length + 1 <= max) return max;
  const limit = Math.max(max, URL_ECHO_MAX_CHARS);
  const hostname = URL.parse(origin)?.hostname ?? '';
  return origin.length + 1 > limit && isDnsNameLength(hostname) ? origin.length + 2 : limit;
}

/** `scheme://host[:port]` of a text that parses as a URL with a scheme and a host; undefined for other texts. */
function urlOrigin(text: string): string | undefined {
  const start = /^[a-z][a-z0-9+.-]*:\/\//i.exec(text)?.[0];
  if (start === undefined) return undefined;
  const end = text.slice(start.length).search(/[/?#\s]/);
  const origin = end === -1 ? text : text.slice(0, start.length + end);
  const url = URL.parse(origin);
  return url === null || url.host === '' ? undefined : origin;
}
