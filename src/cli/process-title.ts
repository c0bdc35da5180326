// The secrets a process was given, and their masking in the process's command line. The first thing
// bin/run.js and the single executable's boot script do (before Node loads anything else of gds), so this
// module imports nothing but the pure masking of core/redact.ts.
import { redactSecrets, SECRET_VARIABLES } from '../core/redact.js';

/**
 * A flag whose value is a secret: `--token` and `--refresh-token` (group 2: the flag's name when it is one of
 * them), and any flag that looks like a mistyped one (`--tok=…`, `--TOKN …`, `--refresh …`), whose value the
 * error about an unknown flag echoes. Group 3: the value given with `=`.
 */
const SECRET_FLAG = /^--((token|refresh-token)|(?:tok|ref)[^=]*)(?:=([^]*))?$/i;

/**
 * `gds api -H` headers known to carry no secret (case aside): content negotiation, conditions, caching, and
 * request and trace ids. Any other header may carry one (Ocp-Apim-Subscription-Key, X-Functions-Key,
 * X-Passphrase, a session id): it is masked, as a header of a name the list does not know costs at worst a
 * masked word.
 */
const HARMLESS_HEADER =
  /^(?:accept(?:-[a-z-]+)?|content-(?:type|language|encoding)|user-agent|prefer|if-(?:match|none-match|modified-since|unmodified-since)|cache-control|pragma|x-request-id|x-correlation-id|x-trace(?:-[a-z-]+)?|traceparent|tracestate|x-b3-[a-z-]+)$/i;

/** A name that says it carries a secret, which no harmless name may (`X-Trace-Token`). */
const SECRET_WORD = /auth|cookie|key|token|secret|pass|pwd|session|credential|signature|jwt|bearer/i;

const isHarmlessHeader = (name: string): boolean => HARMLESS_HEADER.test(name) && !SECRET_WORD.test(name);

/**
 * The secrets a process was given: every `--token`/`--refresh-token` value (and a mistyped such flag's),
 * SERVICE_TOKEN and GDS_REFRESH_TOKEN, and each `gds api -H` header but the harmless ones (HARMLESS_HEADER:
 * whole, and its value; one without a colon whole, as its name cannot be told from its value). A harmless
 * header's value (`X-Trace: 1`) is no secret: masking it would mask that text wherever it shows.
 */
export function secretsFrom(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): string[] {
  const headers = headerValues(argv).flatMap((header) => {
    const colon = header.indexOf(':');
    if (colon === -1) return [header];
    return isHarmlessHeader(header.slice(0, colon).trim()) ? [] : [header, header.slice(colon + 1).trim()];
  });
  return [...flagValues(argv), ...headers, ...SECRET_VARIABLES.map((name) => env[name])].filter(
    (s): s is string => s !== undefined && s !== '-' && s !== '',
  );
}

/** The values of the flags SECRET_FLAG matches, each time one is given (`--token v`, `--token=v`); the word
 *  after a mistyped one only when it is no flag itself. */
function flagValues(argv: readonly string[]): string[] {
  const values: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const match = SECRET_FLAG.exec(argv[i] ?? '');
    if (match === null) continue;
    const [, , exact, given] = match;
    if (given !== undefined) values.push(given);
    else {
      const next = argv[i + 1];
      if (next !== undefined && (exact !== undefined || !next.startsWith('-'))) {
        values.push(next);
        i++;
      }
    }
  }
  return values;
}

/** The values of `-H`/`--header` (`-H v`, `-Hv`, `--header v`, `--header=v`). */
function headerValues(argv: readonly string[]): string[] {
  const values: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--') break;
    if (arg === '-H' || arg === '--header') {
      const value = argv[i + 1];
      if (value !== undefined) values.push(value);
      i++;
    } else if (arg.startsWith('--header=')) values.push(arg.slice('--header='.length));
    else if (arg.startsWith('-H') && arg.length > 2 && !arg.startsWith('--')) values.push(arg.slice(2));
  }
  return values;
}

/**
 * Hides the `--token`/`--refresh-token` values, `-H` headers and any token of a known shape given otherwise
 * (`tokens revoke tf_…`, a token as an alias's argument) from other users of the machine: on Linux `ps` and
 * /proc/PID/cmdline read the process's argv memory, which Node overwrites when process.title is set (libuv
 * writes the title over argv), so the title becomes the command line with those values masked.
 * process.argv (gds's own copy) keeps them. Does nothing when there is nothing to mask.
 */
export function scrubProcessTitle(argv: readonly string[] = process.argv): void {
  // The single executable's argv repeats its path: the title shows it once, as `ps` did.
  const words = argv[1] === argv[0] ? [argv[0], ...argv.slice(2)] : [...argv];
  const line = words.join(' ');
  const masked = redactSecrets(line, secretsFrom(argv, {}));
  if (masked === line) return;
  try {
    process.title = masked;
  } catch {
    // A platform without a settable title: nothing to hide there either.
  }
}
