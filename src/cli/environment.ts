// The short, deliberate list of environment variables that steer gds (`gds help environment`). No flag that
// targets, replaces, confirms or redirects reads one: only the flags of FLAG_VARIABLES do, and
// test/commands/environment-variables.test.ts checks every command's flags against it.

export interface EnvironmentVariable {
  names: readonly string[];
  description: string;
}

/** The flags that read a variable, by flag name. Every other flag reads none. */
export const FLAG_VARIABLES: Readonly<Record<string, string>> = {
  profile: 'GDS_PROFILE',
  json: 'GDS_JSON',
  interval: 'GDS_INTERVAL',
  // dbt's own variable for its --indirect-selection, read as dbt reads it so that a CI job set up for dbt
  // plans the tests dbt runs.
  'indirect-selection': 'DBT_INDIRECT_SELECTION',
  // dbt's own variable for its --profiles-dir: the profiles.yml whose config: indirect_selection dbt reads.
  'profiles-dir': 'DBT_PROFILES_DIR',
};

export const ENVIRONMENT_VARIABLES: readonly EnvironmentVariable[] = [
  {
    names: ['SERVICE_TOKEN'],
    description: 'An API token used instead of a profile (after --token). CI sets this and SERVICE_API_URL.',
  },
  { names: ['SERVICE_API_URL'], description: 'The API base URL (after --base, before the profile).' },
  { names: ['GDS_PROFILE'], description: 'The profile to use instead of the active one (as --profile).' },
  {
    names: ['GDS_JSON', 'GDS_CONTENT_TYPE'],
    description:
      'GDS_JSON=1 or GDS_CONTENT_TYPE=json: NDJSON on stdout as with --json. gate apply/validate/diff -f accept ' +
      'the records gate suggest and gate get print then, so their pipes work in both modes.',
  },
  {
    names: ['GDS_CONFIG_DIR'],
    description:
      'The folder of config.json (credentials) and settings.json (gds settings, aliases) instead of $XDG_CONFIG_HOME/gds (default ~/.config/gds).',
  },
  {
    names: ['GDS_SECRET_STORAGE'],
    description: 'auto (default), keychain (refuse the file fallback) or file (never touch the keychain).',
  },
  {
    names: ['GDS_KEYCHAIN_TIMEOUT_MS', 'GDS_LOCK_WAIT_MS'],
    description:
      'How long a keychain call may take before gds gives up on it (default 3000; a read is asked once more); ' +
      'how long a command waits for another gds at work on the same profile before it gives up, config_locked ' +
      '(default 20000; 0: one try, no wait).',
  },
  {
    names: ['GDS_COMPLETION_TIMEOUT_MS'],
    description:
      'How long TAB completion waits for the service (table names, ids, jobs) before it offers nothing (default 2000, at most 600000).',
  },
  { names: ['GDS_CLIENT_ID'], description: 'The OAuth client id of gds auth login (default gds-cli).' },
  {
    names: ['GDS_DEBUG'],
    description:
      'GDS_DEBUG=1 logs each request, answer and retry, each keychain call and profile lock on stderr (tokens masked).',
  },
  {
    names: ['GDS_BROWSER', 'BROWSER'],
    description:
      'The program that opens web pages (auth login, --web), e.g. firefox or wslview; false or none: never open one. GDS_BROWSER beats the browser setting, BROWSER comes after it.',
  },
  {
    names: ['GDS_PROMPT_DISABLED'],
    description:
      'Set to 1: gds never asks a question, even on a terminal (as when piped); 0: it may (beats the prompt setting).',
  },
  {
    names: ['DBT_INDIRECT_SELECTION', 'DBT_PROFILES_DIR', 'DBT_LOG_PATH'],
    description:
      "dbt's own: which dbt tests of the selected models plan and apply make Gate 1 rules (eager, cautious, buildable, empty), as --indirect-selection; the folder of the profiles.yml whose config: indirect_selection they read, as --profiles-dir (nothing else of it is read); the folder of the dbt.log they read to tell whether a dbt run since the catalog rebuilt a model (relative to the dbt project folder; default: dbt_project.yml's log-path, else logs).",
  },
  {
    names: ['GDS_INTERVAL'],
    description: 'Seconds between polls of long work (push --wait, status --watch), as --interval.',
  },
  {
    names: ['NO_COLOR', 'CLICOLOR', 'FORCE_COLOR', 'CLICOLOR_FORCE'],
    description:
      'NO_COLOR (or CLICOLOR=0): never colour. FORCE_COLOR or CLICOLOR_FORCE: colour even when not on a terminal.',
  },
  {
    names: ['GDS_FORCE_TTY'],
    description:
      'Print as on a terminal even when piped (aligned tables, relative times, colour), as gh GH_FORCE_TTY; a number is the width in columns, 60% a share of the terminal.',
  },
  {
    names: ['GDS_PAGER', 'PAGER'],
    description:
      "On a terminal, the lists, gate diff and gds api go through this pager, as gh's do (GDS_PAGER first, even empty, then the pager of gds settings, then PAGER; unset, empty or cat: none). less gets LESS=FRX unless LESS is set. Piped output and help are never paged; quitting the pager early is no error.",
  },
  {
    names: ['HTTPS_PROXY', 'HTTP_PROXY', 'NO_PROXY'],
    description:
      'An http:// or https:// proxy (lower-case names too; any other value is refused, exit 2); NO_PROXY lists hosts reached directly; loopback always is.',
  },
  {
    names: ['GDS_NO_UPDATE_NOTIFIER', 'CI'],
    description:
      'Set to anything: no update notice. gds otherwise says once a day, on a terminal, when a newer release is out (the release source the package names; none: nothing is fetched); CI set (as CI services do) turns it off too.',
  },
];

/** Every variable name of the list. */
export function environmentVariableNames(): string[] {
  return ENVIRONMENT_VARIABLES.flatMap((variable) => variable.names);
}
