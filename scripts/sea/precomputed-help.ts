// Help pages served by the boot script without compiling the bundle: `gds --help` (and `-h`),
// `gds <topic> --help` and `gds <command> --help`, each exactly as oclif renders it for the case at hand.
// - Off a terminal (scripts, pipes, CI logs, editors: neither stdout nor stderr is one), oclif renders help at
//   80 columns without colour: those pages are rendered at build time (train.ts) and kept in the asset help.json.
// - On a terminal the width and the colour are the user's: oclif renders the page once, the boot script keeps
//   what it printed in the cache ($XDG_CACHE_HOME/gds/help/<build>/), keyed by the arguments, the terminal's
//   width and everything oclif's colour choice reads (ansis: stdout being a terminal, TERM, COLORTERM,
//   NO_COLOR, CI names…), and serves it from there at that width and colour afterwards.
// Any variable that changes oclif's output otherwise or asks to watch the bundle run (OCLIF_COLUMNS,
// FORCE_COLOR, DEBUG, the start-up tests' GDS_TEST_*) sends the call to oclif, and nothing is kept.
import { join } from 'node:path';
import { cacheDir } from '../../src/core/folders.js';

/** The asset (help.json): the user agent the pages' VERSION line shows, and each page by its argv. */
export interface PrecomputedHelp {
  userAgent: string;
  pages: Record<string, string>;
}

/** The key of a page: its arguments, as given. */
export function helpKey(argv: readonly string[]): string {
  return JSON.stringify(argv);
}

interface Streams {
  stdout: { isTTY?: boolean; columns?: number };
  stderr: { isTTY?: boolean };
}

/**
 * Which kind of precomputed page may answer these arguments: `piped` (the build's, when neither stream is a
 * terminal), `terminal` (the cache's), or none (not a help request, or a variable oclif or a test reads).
 */
export function helpCase(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  streams: Streams = process,
): 'piped' | 'terminal' | undefined {
  if (argv.at(-1) !== '--help' && argv.at(-1) !== '-h') return undefined;
  if (argv[0] === '__complete') return undefined; // the words of a line being completed
  if (Object.keys(env).some((name) => /^(?:FORCE_COLOR|DEBUG|GDS_DEBUG|OCLIF_.*|GDS_TEST_.*)$/.test(name)))
    return undefined;
  return streams.stdout.isTTY === true || streams.stderr.isTTY === true ? 'terminal' : 'piped';
}

/** Whether help for these arguments may come from the build: both streams are not terminals and oclif would see the same. */
export function precomputedHelpApplies(argv: readonly string[], env: NodeJS.ProcessEnv): boolean {
  return helpCase(argv, env) === 'piped';
}

/** Everything a terminal page depends on besides the build: the arguments, the width, the colour's inputs. */
export function terminalHelpKey(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  streams: Streams = process,
): string {
  const tty = streams.stdout.isTTY === true;
  const colourNames = Object.keys(env)
    .filter((name) => /^(TEAMCI|GITHUB|GITEA)/.test(name))
    .sort();
  const colourValues = [
    'TERM',
    'COLORTERM',
    'NO_COLOR',
    'TF_BUILD',
    'CI',
    'PM2_HOME',
    'pm_id',
    'NEXT_RUNTIME',
  ].map((name) => env[name] ?? null);
  return JSON.stringify([argv, tty, tty ? (streams.stdout.columns ?? 0) : 80, colourValues, colourNames]);
}

/** The cache file of a terminal page: under the build's own folder, named by a 64-bit hash of its key. */
export function terminalHelpFile(buildId: string, key: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(cacheDir(env), 'help', buildId, `${fnv1a(key, 0x811c9dc5)}${fnv1a(key, 0x01000193)}.txt`);
}

/** FNV-1a over UTF-16 code units, 32 bits as 8 hex digits (a file name, not a secret: node:crypto stays unloaded). */
function fnv1a(text: string, seed: number): string {
  let hash = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}
