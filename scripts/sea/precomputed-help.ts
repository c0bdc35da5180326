// Help pages rendered by oclif at build time (train.ts), served by the boot script without compiling the
// bundle: `gds --help` (and `-h`), `gds <topic> --help` and `gds <command> --help`, for the case they were rendered in
// and no other. oclif renders help at 80 columns without colour when neither stdout nor stderr is a
// terminal (scripts, pipes, CI logs, editors); on a terminal the width and colour are the user's, so oclif
// renders it at run time. Any variable that changes oclif's output or asks to watch the bundle run
// (OCLIF_COLUMNS, FORCE_COLOR, DEBUG, the start-up tests' GDS_TEST_*) sends the call to oclif as well.

/** The asset (help.json): the user agent the pages' VERSION line shows, and each page by its argv. */
export interface PrecomputedHelp {
  userAgent: string;
  pages: Record<string, string>;
}

/** The key of a page: its arguments, as given. */
export function helpKey(argv: readonly string[]): string {
  return JSON.stringify(argv);
}

/** Whether help for these arguments may come from the build: both streams are not terminals and oclif would see the same. */
export function precomputedHelpApplies(argv: readonly string[], env: NodeJS.ProcessEnv): boolean {
  if (argv.at(-1) !== '--help' && argv.at(-1) !== '-h') return false;
  if (process.stdout.isTTY === true || process.stderr.isTTY === true) return false;
  return !Object.keys(env).some((name) =>
    /^(?:FORCE_COLOR|DEBUG|GDS_DEBUG|OCLIF_.*|GDS_TEST_.*)$/.test(name),
  );
}
