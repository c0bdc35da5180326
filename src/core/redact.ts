// Masking of secrets for display and logs. A token is never shown whole: at most its kind.

/** Environment variables that carry a secret into gds: masked in errors, never handed to a keychain helper. */
export const SECRET_VARIABLES = ['SERVICE_TOKEN', 'GDS_REFRESH_TOKEN'] as const;

const MASK = '****';
/** Every kind of secret the service issues: static CLI tokens, integration client tokens, session and
 *  integration refresh tokens, JWTs. */
const KNOWN_PREFIXES = ['cli_', 'tf_', 'gdsr_', 'rt_', 'eyJ'] as const;

/**
 * A token reduced to its kind: `cli_…****` for a static CLI token, `tf_…****` for a client token,
 * `gdsr_…****` or `rt_…****` for a refresh token, `eyJ…****` for a JWT, `****` for anything else
 * (nothing of an unknown secret is shown).
 */
export function maskToken(token: string): string {
  const prefix = KNOWN_PREFIXES.find((p) => token.startsWith(p) && token.length > p.length + 8);
  return prefix ? `${prefix}…${MASK}` : MASK;
}

/** A query parameter that carries a secret by its name (OAuth's, and the usual API key names). */
const URL_QUERY_SECRET =
  /([?&](?:token|access_token|refresh_token|id_token|client_secret|api_?key|password|secret)=)[^&#\s"'<>]+/gi;

const SECRET_PATTERNS: Array<[RegExp, (match: string, ...groups: string[]) => string]> = [
  // Authorization header values, whatever the token looks like.
  [/\b(Bearer)\s+[^\s"',;)]+/gi, (_match, scheme) => `${scheme} ${MASK}`],
  // JWTs: three base64url segments, the first one a JSON header.
  [/\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g, maskToken],
  // A JWT an echo cut (src/core/echo.ts) before its signature: its header and claims, then `…` (written as
  // \u2026: the executable's bundle keeps a regular expression's characters as they are, and the raw `…`
  // there never matched).
  [/\beyJ[A-Za-z0-9_-]{5,}(?:\.[A-Za-z0-9_-]*)?\u2026/g, maskToken],
  // Static CLI tokens, client tokens and session refresh tokens.
  [/\b(?:cli|tf|gdsr)_[A-Za-z0-9_-]{8,}/g, maskToken],
  // Integration refresh tokens: `rt_<hex id>.<secret>` (a `schema.table` name such as rt_sales.orders is
  // not one).
  [/\brt_[0-9a-f]{8,}\.[A-Za-z0-9_-]{16,}/g, maskToken],
  // The user name and password of a URL (`https://user:password@host`), in any text.
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>]+@/gi, (_match, scheme) => `${scheme}${MASK}@`],
  // A secret carried in a URL's query (`?token=…`, `&access_token=…`), whatever it looks like: a URL echoed by
  // an error (a request that failed) or a debug log keeps the parameter's name, never its value.
  [URL_QUERY_SECRET, (_match, head) => `${head}${MASK}`],
  // Other secrets carried as JSON fields, camelCase or OAuth's snake_case.
  [
    /("(?:refreshToken|accessToken|clientToken|token|secret|password|refresh_token|access_token|device_code)"\s*:\s*")[^"]*(")/gi,
    (_match, head, tail) => `${head}${MASK}${tail}`,
  ],
];

/**
 * The secrets of this run: those it was given (main() sets them, from its flags and environment) and each
 * token its clients sent (a profile's, a drawn one). What an echo (src/core/echo.ts) masks before it cuts:
 * a cut through a secret leaves a part that the mask of the output, run later, no longer knows.
 */
let runSecrets: string[] = [];

/** The secrets of this run, as `knownSecrets` of redactSecrets. */
export function secretsOfRun(): readonly string[] {
  return runSecrets;
}

/** The run starts with these secrets (each run of main() in one process its own). */
export function startRunSecrets(secrets: readonly string[]): void {
  runSecrets = [...secrets];
}

/** A secret the run came to hold (a token a client sent). */
export function addRunSecret(secret: string): void {
  if (secret !== '' && !runSecrets.includes(secret)) runSecrets.push(secret);
}

/**
 * The shortest known secret masked as a text: a credential given to gds (`--token`, `SERVICE_TOKEN`, a header)
 * is never shown whole, however short; under this it would mask every such letter of the output.
 */
const WHOLE_SECRET_MIN_CHARS = 4;

/**
 * The shortest part of a known secret masked where an echo cut it (`sk-live-Ab3d…`, `…9hQ2abcd`): a shorter part
 * is a word or a number the output holds elsewhere, and does not give the secret away.
 */
const CUT_SECRET_MIN_CHARS = 8;

/**
 * The text with every bearer token, JWT, `cli_`/`tf_`/`gdsr_`/`rt_` token, secret JSON field and each of
 * `knownSecrets` (of WHOLE_SECRET_MIN_CHARS or more) replaced by its mask. For log lines, error messages and
 * anything else shown.
 */
export function redactSecrets(text: string, knownSecrets: ReadonlyArray<string | undefined> = []): string {
  let out = text;
  // Longest first: a short secret inside a longer one (a header's value in the header) would otherwise split the
  // longer one's text before it is matched whole, and leave the rest of it shown.
  const secrets = knownSecrets.filter(
    (secret): secret is string => secret !== undefined && secret.length >= WHOLE_SECRET_MIN_CHARS,
  );
  for (const secret of secrets.sort((a, b) => b.length - a.length)) {
    for (const form of writtenForms(secret)) out = out.split(form).join(maskToken(secret));
    if (out.includes('…')) out = withoutCutForms(out, secret);
  }
  if (!mayMatchAPattern(out)) return out;
  for (const [pattern, replace] of SECRET_PATTERNS) out = out.replace(pattern, replace);
  return out;
}

/**
 * The text with each part of `secret` that an echo cut (src/core/echo.ts: a start followed by `…`, a path's
 * end after it) masked: a 100-character token said back as its first 79 characters is still the token.
 */
function withoutCutForms(text: string, secret: string): string {
  let out = text;
  for (let chars = Math.min(secret.length - 1, 80); chars >= CUT_SECRET_MIN_CHARS; chars--) {
    for (const cut of [`${secret.slice(0, chars)}…`, `…${secret.slice(-chars)}`])
      if (out.includes(cut)) out = out.split(cut).join(maskToken(secret));
  }
  return out;
}

/**
 * Whether any of SECRET_PATTERNS can match: each needs a `_` (the service's tokens), a `:` (a URL's `://`, a
 * JSON field), `eyJ` (a JWT), `bearer` in some case, or a query's `?token=`, `&password=`, `&secret=` or
 * `&apikey=` (the other secret parameters have a `_`). What it buys: a command line holds none of them as a
 * rule, and then no pattern is compiled (the first use of the six cost 0.5 ms of every start-up, twice).
 */
function mayMatchAPattern(text: string): boolean {
  return (
    text.includes('_') ||
    text.includes(':') ||
    text.includes('eyJ') ||
    text.toLowerCase().includes('bearer') ||
    (text.includes('=') && /[?&](?:token|password|secret|apikey)=/i.test(text))
  );
}

/**
 * A secret as it may be written: itself, and, when it holds a backslash, a quote or a control character (a
 * token pasted with a carriage return, say), as JSON and util.inspect escape it (error details, oclif's
 * `DEBUG=*` log of argv), longest first.
 */
function writtenForms(secret: string): string[] {
  if (!/[\\'"\u0000-\u001f\u007f-\u009f]/.test(secret)) return [secret];
  const { inspect } = process.getBuiltinModule('node:util');
  const forms = new Set([JSON.stringify(secret).slice(1, -1), inspect(secret).slice(1, -1), secret]);
  return [...forms].sort((a, b) => b.length - a.length);
}

/** A JSON value (error details) with redactSecrets applied to its JSON text, parsed back. */
export function redactJson(value: unknown, knownSecrets: ReadonlyArray<string | undefined> = []): unknown {
  const text = value === undefined ? undefined : JSON.stringify(value);
  if (text === undefined) return value;
  const redacted = redactSecrets(text, knownSecrets);
  try {
    return JSON.parse(redacted);
  } catch {
    // A known secret that was a bare JSON number or keyword: the masked text is all that is left.
    return redacted;
  }
}
