// Every gds command extends BaseCommand:
//
//   import { diffWithServer } from '../../services/gates.js'; // gds's own modules: static imports
//
//   export default class GateDiff extends BaseCommand<typeof GateDiff> {
//     static override summary = '…';
//     static override examples = ['<%= config.bin %> gate diff -f a.yml --against b.yml'];
//     static override args = { tableId: Args.string() };
//     static override flags = { file: Flags.string({ char: 'f', required: true }) };
//     async run(): Promise<void> {
//       this.out.record({ … });                                  // this.flags / this.args are parsed
//       throw new CliError('…', { exitCode: ExitCode.Usage, suggestion: '…' }); // rendered by catch()
//     }
//   }
//
// init() parses argv (global flags --token/--base/--profile/--json included) and builds `this.out`;
// catch() renders any error (human or one JSON line on stderr) and exits with its exit code; Ctrl-C
// exits 130 with the cursor shown, SIGTERM 143. Add the class to src/commands/loaders.ts to make it a command.
//
// Imports: gds's own modules are imported statically. A library that would slow every start-up (10 ms of
// CPU or more to load; mustache, 2 ms, measurably) stays out of the runs that do not use it, behind
// `await import()` in the one module of gds that wraps it: PostgreSQL's parser in
// core/artifacts/pg-grammar.ts, jq in jq.ts, cli-truncate and string-width in table.ts, mustache in
// template.ts, ora in output-spinner.ts, the prompts in prompt.ts, the OpenID client in
// auth/openid-client.ts, the keychain in auth/keychain-child.ts, oclif in main.ts (csv-parse, undici and
// proper-lockfile likewise), yaml and the diff library in core/libraries/, ajv in
// core/gate1/schema-validator.ts: the modules built on them take the loaded library as a parameter. eslint
// refuses an import() of gds's own modules (but the command table's); test/cli/cli-base.test.ts checks that
// start-up loads none of these libraries.
import { Command, Flags } from '@oclif/core';
import type { Interfaces } from '@oclif/core';
import { CliError, ExitCode } from '../core/errors.js';
import { toCliError } from './errors.js';
import { flagMeant } from './command-route.js';
import { GLOBAL_FLAGS } from './global-flags.js';
import { JSON_FIELDS } from './json-fields.js';
import { pasteCommand } from './paste-command.js';
import { noteFailure } from './usage-ending.js';
import { checkJq } from './jq.js';
import { exitInterrupted, jsonRequested, Output, shapingRequested } from './output.js';
import { redactError } from './secrets.js';
import { compileTemplate } from './template.js';

export type GlobalFlags = Interfaces.InferredFlags<(typeof BaseCommand)['baseFlags']>;
export type CommandFlags<T extends typeof Command> = Interfaces.InferredFlags<
  (typeof BaseCommand)['baseFlags'] & T['flags']
>;
export type CommandArgs<T extends typeof Command> = Interfaces.InferredArgs<T['args']>;

const globalGroup = 'GLOBAL';

export abstract class BaseCommand<T extends typeof Command> extends Command {
  static override baseFlags = {
    token: Flags.string({ ...GLOBAL_FLAGS.token, helpGroup: globalGroup }),
    base: Flags.string({ ...GLOBAL_FLAGS.base, helpGroup: globalGroup }),
    profile: Flags.string({ ...GLOBAL_FLAGS.profile, helpGroup: globalGroup }),
    json: Flags.boolean({ ...GLOBAL_FLAGS.json, helpGroup: globalGroup }),
    jq: Flags.string({ ...GLOBAL_FLAGS.jq, helpGroup: globalGroup }),
    template: Flags.string({ ...GLOBAL_FLAGS.template, helpGroup: globalGroup, exclusive: ['jq'] }),
  };

  /**
   * Whether what the command prints on a terminal goes through the pager (GDS_PAGER, PAGER: pager.ts), as
   * gh's lists, views, diffs and `api` do. Never piped; help never pages.
   */
  static pager = false;

  protected flags!: CommandFlags<T>;
  protected args!: CommandArgs<T>;
  protected out!: Output;
  /** What was done before an interruption, for the `Interrupted.` error's details (push --wait: the ids). */
  protected interruptDetails: Record<string, unknown> | undefined;
  /** What to do after an interruption (said on stderr, and as the `Interrupted.` error's suggestion). */
  protected interruptAdvice: string | undefined;

  override async init(): Promise<void> {
    await super.init();
    const { argv, fields } = takeJsonFields(this.argv, this.ctor);
    this.argv = argv;
    const listedFields = this.id === undefined ? undefined : JSON_FIELDS[this.id];
    const json = jsonRequested(argv);
    // Until the flags are parsed, --jq or --template (which imply --json) make an error a JSON line too.
    const early = json || shapingRequested(argv);
    this.out = new Output({ json: early, fields, ...(listedFields ? { listedFields } : {}) });
    if (fields !== undefined) checkJsonFields(this.id, fields);
    listenForInterrupts(this);
    this.debug('interrupt handler installed');
    // oclif would fill a missing argument from piped stdin; stdin belongs to `-f -` alone.
    const argDefinitions = Object.fromEntries(
      Object.entries(this.ctor.args).map(([name, arg]) => [name, { ...arg, ignoreStdin: true }]),
    );
    const { args, flags } = await this.parse({
      flags: this.ctor.flags,
      baseFlags: this.ctor.baseFlags,
      args: argDefinitions,
      strict: this.ctor.strict,
    });
    this.flags = flags as CommandFlags<T>;
    this.args = args as CommandArgs<T>;
    refuseEmptyIds(args as Record<string, unknown>, this.ctor.args, this.commandWords());
    const jq = (flags as { jq?: string }).jq;
    const template = (flags as { template?: string }).template;
    // A word that looked like --jq or --template was another flag's value: the output is not JSON.
    if (early && !json && jq === undefined && template === undefined) {
      this.out = new Output({ json: false, fields, ...(listedFields ? { listedFields } : {}) });
    }
    if (jq !== undefined) {
      const out = new Output({ json: true, fields, jq, ...(listedFields ? { listedFields } : {}) });
      // A filter of the subset gds evaluates itself is valid jq (jq-subset.test.ts): no jq to load.
      if (!out.jqIsSimple) {
        await checkJq(jq);
      }
      this.out = out;
    }
    if (template !== undefined) {
      this.out = new Output({
        json: true,
        fields,
        template: await compileTemplate(template),
        ...(listedFields ? { listedFields } : {}),
      });
    }
    if ((this.ctor as { pager?: boolean }).pager === true && process.stdout.isTTY === true) {
      await this.out.usePager();
    }
  }

  /** Records still going through --jq are written before the process ends. */
  override async finally(error: Error | undefined): Promise<unknown> {
    try {
      await this.out?.flush();
    } catch (failure) {
      if (pagerClosed(failure)) return super.finally(error);
      const cliError = this.endingFailure(noteFailure(toCliError(failure, 'See `gds --help`.')));
      // A command that failed has said so (catch): its failure stands, and what went wrong writing the records
      // it wrote before is a warning, never a second error line.
      if (error !== undefined && !isOclifExit(error)) this.out.warn(redactError(cliError, this.argv).message);
      else {
        this.out.error(redactError(cliError, this.argv));
        process.exitCode = cliError.exitCode;
      }
    }
    // gds ends when the person has quit the pager (as gh and git do), not before: the shell would take
    // the terminal back from under it.
    await this.out?.endPager();
    return super.finally(error);
  }

  override async catch(error: Error): Promise<never> {
    if (isOclifExit(error)) throw error;
    if (pagerClosed(error)) this.exit(ExitCode.Ok);
    const failure = this.endingFailure(
      noteFailure(
        toCliError(error, `See \`${this.config.bin} ${this.commandWords()} --help\`.`, {
          flagNames: Object.keys({ ...this.ctor.baseFlags, ...this.ctor.flags }),
          argv: this.argv,
        }),
      ),
    );
    (this.out ?? new Output({ json: jsonRequested(this.argv) || shapingRequested(this.argv) })).error(
      redactError(failure, this.argv),
    );
    this.exit(failure.exitCode);
  }

  /**
   * The failure as the command ends with it, whether thrown by run() or met writing the output (a --jq filter
   * failing on a record): a command whose exit codes answer a question (gate diff) renumbers it here.
   */
  protected endingFailure(failure: CliError): CliError {
    return failure;
  }

  /**
   * Whether the boolean flag `--name` was given: as parsed, or, for a failure met before the flags are parsed
   * (a usage error), as the command line asks for it, or nearly, a mistyped flag that the error says was meant
   * (flagMeant: not after `--`, where `--exit-status` is an argument, a table's name).
   */
  protected flagGiven(name: string): boolean {
    const flags = this.flags as Record<string, unknown> | undefined;
    if (flags !== undefined) return flags[name] === true;
    return flagMeant(this.argv, name, Object.keys({ ...this.ctor.baseFlags, ...this.ctor.flags }));
  }

  /** A command line for the person to paste, carrying the --profile/--base they gave (paste-command.ts). */
  protected pasteCommand(words: readonly string[]): string {
    const { profile, base, token } = this.flags as GlobalFlags;
    return pasteCommand(this.config.bin, words, { profile, base, token });
  }

  interrupt(signal: 'SIGINT' | 'SIGTERM'): void {
    if (this.out.paging) {
      // The pager (less) gets the same Ctrl-C and stays open: it gets the end of what was printed, and gds
      // exits 130 once it is quit, so the shell does not take the terminal back from under it. A second
      // Ctrl-C meanwhile ends gds at once (Node's default). A SIGTERM waits for the pager the same way.
      void this.out.endPager().then(() => this.interrupt(signal));
      return;
    }
    exitInterrupted(this.out, this.interruptDetails, signal, this.interruptAdvice);
  }

  /**
   * A held Ctrl-C or SIGTERM that ends gds (130, 143) once the work it waited for finished and its outcome was said
   * (finish-before-exit.ts): a notice, under --json a warning line, never an error that would deny that outcome.
   */
  protected sayInterruptedAfter(signal: NodeJS.Signals, what: string): void {
    this.out.interrupted();
    const notice = `Interrupted${signal === 'SIGTERM' ? ' (SIGTERM)' : ''} after ${what}.`;
    if (this.out.json) this.out.warn(notice);
    else this.out.info(notice);
  }

  private commandWords(): string {
    return (this.id ?? '').split(':').join(' ');
  }
}

/** `--json a,b` names only fields the command's records have (json-fields.ts): exit 2 before anything is sent. */
function checkJsonFields(id: string | undefined, fields: readonly string[]): void {
  const known = id === undefined ? undefined : JSON_FIELDS[id];
  // `--json=` (`--json="$FIELDS"` with the variable empty) would print `{}` for every record.
  if (fields.length === 0) {
    throw new CliError('--json= names no field.', {
      exitCode: ExitCode.Usage,
      code: 'empty_json_fields',
      suggestion:
        known === undefined
          ? 'Give the fields (--json id,name), or --json alone for whole records.'
          : `Available fields: ${known.join(', ')}. Or --json alone for whole records.`,
      details: { available: known ?? null },
    });
  }
  if (known === undefined) return;
  const unknown = fields.filter((field) => !known.includes(field));
  if (unknown.length === 0) return;
  throw new CliError(`Unknown JSON field${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}.`, {
    exitCode: ExitCode.Usage,
    code: 'unknown_json_field',
    suggestion: `Available fields: ${known.join(', ')}.`,
    details: { unknown, available: known },
  });
}

/** The arguments that name something on the service (a table, a record, a job, a request). */
const ID_ARGUMENTS = ['tableId', 'table', 'id', 'jobId', 'requestId'];

/**
 * An id argument given empty (`gds status "$TABLE_ID"` with the variable unset), `.` or `..`: exit 2 before
 * anything is sent. An empty one went to the service as an empty name or path segment, which answered with a
 * lookup error of its own ("name must be given once, with a value", exit 7) or "Record  does not exist"
 * (exit 5); a URL drops a `.` or `..` segment with the one before it, so `gds gate cancel ..` was sent as
 * POST /api/cancel, another endpoint than the command's.
 */
function refuseEmptyIds(
  args: Record<string, unknown>,
  definitions: Record<string, { description?: string }> | undefined,
  words: string,
): void {
  for (const name of ID_ARGUMENTS) refuseBadId(name, args[name], words, definitions?.[name]?.description);
}

/** Exit 2 when `value`, the id argument `name` of `gds <words>`, is empty, `.` or `..` (refuseEmptyIds). */
export function refuseBadId(name: string, value: unknown, words: string, description?: string): void {
  if (value === '.' || value === '..') {
    throw new CliError(`The argument <${name}> is ${value}, which is no id: a URL drops it from its path.`, {
      exitCode: ExitCode.Usage,
      code: 'invalid_argument',
      suggestion: `Give the id itself; nothing was sent. See \`gds ${words} --help\`.`,
    });
  }
  if (value !== '') return;
  throw new CliError(`The argument <${name}> is empty${description ? `: ${description}` : '.'}`, {
    exitCode: ExitCode.Usage,
    code: 'empty_argument',
    suggestion: `Give it a value (a shell variable that is unset gives an empty argument); nothing was sent. See \`gds ${words} --help\`.`,
  });
}

interface ParsedDefinitions {
  flags?: Record<string, { type: string; char?: string }>;
  baseFlags?: Record<string, { type: string; char?: string }>;
  args?: Record<string, { required?: boolean }>;
}

const fieldName = /^[A-Za-z_][\w.-]*$/;
const camelCaseWord = /^[a-z][A-Za-z0-9]*$/;

/**
 * `--json id,name` (or `--json=id,name`): the fields each record keeps, taken out of argv so oclif sees a
 * plain boolean --json. A word after --json is a field list when it has a comma, or when it is a single
 * camelCase word the command does not need as an argument (`gds status --json t_42` stays an argument).
 */
export function takeJsonFields(
  argv: readonly string[],
  command: ParsedDefinitions,
): { argv: string[]; fields?: string[] } {
  const end = argv.indexOf('--') === -1 ? argv.length : argv.indexOf('--');
  for (let i = 0; i < end; i += 1) {
    const token = argv[i] ?? '';
    if (token.startsWith('--json=')) {
      const fields = token.slice('--json='.length).split(',').filter(Boolean);
      return { argv: [...argv.slice(0, i), '--json', ...argv.slice(i + 1)], fields };
    }
    if (token !== '--json' || i + 1 >= end) continue;
    const next = argv[i + 1] ?? '';
    const items = next.split(',');
    const listed = items.length > 1 && items.every((item) => fieldName.test(item));
    const rest = [...argv.slice(0, i + 1), ...argv.slice(i + 2)];
    const single = camelCaseWord.test(next) && positionalCount(rest, command) >= requiredArgs(command);
    if (listed || single) return { argv: rest, fields: items };
  }
  return { argv: [...argv] };
}

function requiredArgs(command: ParsedDefinitions): number {
  return Object.values(command.args ?? {}).filter((arg) => arg.required === true).length;
}

/** The argument words of argv: not flags, and not the values of flags that take one. */
function positionalCount(argv: readonly string[], command: ParsedDefinitions): number {
  const definitions = Object.entries({ ...command.baseFlags, ...command.flags });
  const takesValue = (token: string): boolean => {
    const long = token.startsWith('--') ? token.slice(2) : undefined;
    const definition = definitions.find(([name, flag]) =>
      long === undefined ? token === `-${flag.char}` : name === long,
    );
    return definition?.[1].type === 'option';
  };
  let count = 0;
  for (let i = 0; i < argv.length; i += 1) {
    const token = argv[i] ?? '';
    if (token === '--') return count + argv.length - i - 1;
    if (token.startsWith('-') && token !== '-') {
      if (!token.includes('=') && takesValue(token)) i += 1;
      continue;
    }
    count += 1;
  }
  return count;
}

/** A write refused because the person quit the pager before the end (pager.ts, PagerClosed): exit 0, silent. */
function pagerClosed(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'pager_closed';
}

function isOclifExit(error: Error): boolean {
  return (error as { code?: unknown }).code === 'EEXIT';
}

/** The command Ctrl-C and SIGTERM interrupt: the one running (a process runs one; in-process tests, many). */
let interruptible: { interrupt(signal: 'SIGINT' | 'SIGTERM'): void } | undefined;
const onSignal = {
  SIGINT: () => interruptible?.interrupt('SIGINT'),
  SIGTERM: () => interruptible?.interrupt('SIGTERM'),
} as const;

/**
 * One listener a signal for the process, whatever the number of commands run in it (a listener a command left
 * as many listeners as commands, past Node's warning at 11, in a process that runs many). Once: a second
 * Ctrl-C ends gds at once (Node's default).
 */
function listenForInterrupts(command: { interrupt(signal: 'SIGINT' | 'SIGTERM'): void }): void {
  interruptible = command;
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    if (!process.listeners(signal).includes(onSignal[signal])) process.once(signal, onSignal[signal]);
}
