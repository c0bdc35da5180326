// Help topics, as gh has them: `gds help environment`, `gds help exit-codes`, `gds help formatting` and
// `gds help global-flags`. Plain text generated from the code that decides (the variable list of
// environment.ts, the exit codes of errors.ts, the global flags of BaseCommand/ApiCommand), so the pages
// cannot drift from what gds does. main.ts answers them before oclif loads.
import { ENVIRONMENT_VARIABLES } from './environment.js';
import { GLOBAL_FLAGS } from './global-flags.js';
import { ExitCode } from '../core/errors.js';

export interface HelpTopic {
  summary: string;
  render(): string;
}

const indent = (text: string, width = 2) =>
  text
    .split('\n')
    .map((line) => (line === '' ? line : `${' '.repeat(width)}${line}`))
    .join('\n');

/** Wraps `text` to `width` columns, word by word. */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines;
}

function definitionList(rows: ReadonlyArray<readonly [string, string]>): string {
  const nameWidth = Math.min(28, Math.max(...rows.map(([name]) => name.length)) + 2);
  return rows
    .flatMap(([name, text]) => {
      const [first = '', ...rest] = wrap(text, 100 - nameWidth);
      const head =
        name.length + 2 > nameWidth
          ? [name, `${' '.repeat(nameWidth)}${first}`]
          : [`${name.padEnd(nameWidth)}${first}`];
      return [...head, ...rest.map((line) => `${' '.repeat(nameWidth)}${line}`)];
    })
    .map((line) => `  ${line}`)
    .join('\n');
}

function environment(): string {
  const rows = ENVIRONMENT_VARIABLES.map(
    (variable) => [variable.names.join(', '), variable.description] as const,
  );
  return [
    'Only these environment variables steer gds. No flag that targets, replaces, confirms or redirects',
    '(--replace, --to, --yes, --force, --output, --file, --table, --env, ...) reads a variable: say those on',
    'the command line.',
    '',
    definitionList(rows),
    '',
    'Credentials, first match wins: --token/--base, then SERVICE_TOKEN/SERVICE_API_URL, then the profile',
    'named by --profile or GDS_PROFILE, else the active one.',
    '',
    "gds's own settings (`gds settings set KEY VALUE`, kept in settings.json in the config folder) come after",
    'the variables: a flag wins, then the variable, then the setting, then the default. prompt: after',
    'GDS_PROMPT_DISABLED. color: after NO_COLOR, FORCE_COLOR, CLICOLOR_FORCE and CLICOLOR. browser and pager,',
    "as in gh: GDS_BROWSER (GDS_PAGER), then the setting, then the desktop's BROWSER (PAGER).",
  ].join('\n');
}

function exitCodes(): string {
  const meaning: Record<number, string> = {
    [ExitCode.Ok]: 'Success.',
    [ExitCode.Failure]:
      'Failure. For these commands 1 is an answer instead, and their failures exit 2 or more: gate diff (the ' +
      'two differ), plan --exit-code (a table would change), status --exit-status (the certified view is ' +
      'missing or a recertification request open), gate run and gate submit (a HARD_FAIL check failed), ' +
      'push --wait (the baseline job FAILED or was CANCELLED).',
    [ExitCode.Usage]:
      'Usage error or invalid local input (a bad flag, an invalid gate1.yml); or a failure of one of those. ' +
      'plan --detailed-exitcode: a table would change (its failures, a usage error included, exit 1).',
    [ExitCode.Unauthenticated]: 'Not authenticated (401): sign in again, or check SERVICE_TOKEN.',
    [ExitCode.Forbidden]: 'Forbidden (403): your role or token scopes do not allow it.',
    [ExitCode.NotFound]: 'Not found (404).',
    [ExitCode.Conflict]: 'Conflict (409, 412): someone changed it first, or it exists already.',
    [ExitCode.Refused]: 'Refused by the rules of the service (400/422).',
    [ExitCode.RateLimited]: 'Rate limited after retries (429).',
    [ExitCode.Unavailable]: 'Network or server error (5xx, refused connection, timeout).',
    [ExitCode.Interrupted]: 'Interrupted (Ctrl-C); a SIGTERM exits 143.',
  };
  const rows = Object.values(ExitCode).map((code) => [String(code), meaning[code] ?? ''] as const);
  return [
    'gds exits with one of these codes; under --json the error is also one {"error":{...}} line on stderr',
    'with its code, message, suggestion and details.',
    '',
    definitionList(rows),
  ].join('\n');
}

function formatting(): string {
  return [
    'On a terminal gds prints aligned tables without borders, with relative times and coloured states;',
    'ids, versions and times are never cut, free text is. Piped, rows are tab-separated, with no header,',
    'no colour and nothing cut.',
    '',
    'JSON',
    indent(
      [
        '--json (or GDS_JSON=1) prints NDJSON: one compact JSON object per line, a list one line per item,',
        'a single result one line, --watch one line per event. Nothing else goes to stdout; an error is one',
        '{"error":{...}} line on stderr.',
        '',
        "--json id,name keeps those fields of each record (the JSON FIELDS of a command's help list them).",
        '',
        '--jq EXPR filters each record with a jq expression, no jq binary needed. It runs once per record,',
        "so write '.name', not '.[].name'; to gather records into one array pipe to jq -s, or use",
        '--jq \'select(.state == "CERTIFIED") | .id\'.',
        '',
        'JSON keeps every character, on a terminal too: control and bidi characters are \\u escapes. The',
        'strings --jq prints raw and what --template makes are stripped of them on a terminal only.',
      ].join('\n'),
    ),
    '',
    'TEMPLATES',
    indent(
      [
        '-t/--template T prints each record as a Mustache template makes it (gh has Go templates), one line',
        'each: {{field}} and {{a.b}} print a value as it is (an object or array as JSON, nothing HTML-escaped),',
        '{{#list}}...{{/list}} repeats for each item ({{.}} is the item) or shows when a value is set, and',
        '{{^field}}...{{/field}} shows when it is not. A record the template makes empty prints nothing.',
        'Not with --jq.',
      ].join('\n'),
    ),
    '',
    'EXAMPLES',
    indent(
      [
        'gds list --json id,name,state',
        'gds list --jq \'select(.state == "QUARANTINED") | .id\'',
        'gds audit list --all --json | jq -s length',
        "gds list --template '{{id}} {{name}} ({{state}})'",
        "gds audit list -t '{{createdAt}} {{#userEmail}}{{userEmail}}{{/userEmail}}{{^userEmail}}(system){{/userEmail}} {{action}}'",
        "gds api /api/me --template '{{user.email}} is {{role}}'",
      ].join('\n'),
    ),
    '',
    'Colour: only on a terminal and never with NO_COLOR; FORCE_COLOR or CLICOLOR_FORCE force it.',
  ].join('\n');
}

function globalFlags(): string {
  const flags: Record<string, { description: string; env?: string; char?: string }> = GLOBAL_FLAGS;
  const rows = Object.entries(flags).map(([name, flag]) => {
    const value = name === 'json' ? '' : '=<value>';
    const env = flag.env === undefined ? '' : ` (also ${flag.env})`;
    const short = flag.char === undefined ? '' : `-${flag.char}, `;
    return [`${short}--${name}${value}`, `${flag.description}${env}`] as const;
  });
  return [
    'Every command takes these flags, before or after its own words (--max-retry-after: the commands that',
    'call the service).',
    '',
    definitionList(rows),
  ].join('\n');
}

export const HELP_TOPICS: Readonly<Record<string, HelpTopic>> = {
  environment: { summary: 'The environment variables gds reads', render: environment },
  'exit-codes': { summary: 'What each exit code means', render: exitCodes },
  formatting: { summary: 'Tables, NDJSON, --json fields, --jq and --template', render: formatting },
  'global-flags': { summary: 'The flags every command takes', render: globalFlags },
};

/** `gds help <topic>` (or `gds <topic> --help` for a topic that is no command): the page, else undefined. */
export function helpTopicPage(argv: readonly string[]): string | undefined {
  const words = argv.filter((word) => word !== '--help' && word !== '-h');
  const asked = words[0] === 'help' ? words.slice(1) : argv.length > words.length ? words : [];
  if (asked.length !== 1) return undefined;
  const topic = HELP_TOPICS[asked[0] ?? ''];
  if (topic === undefined) return undefined;
  return `${topic.summary}.\n\n${topic.render()}\n`;
}
