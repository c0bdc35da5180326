// Every gds command extends BaseCommand:
//
//   export default class GateDiff extends BaseCommand<typeof GateDiff> {
//     static override summary = '…';
//     static override examples = ['<%= config.bin %> gate diff -f a.yml --against b.yml'];
//     static override args = { tableId: Args.string() };
//     static override flags = { file: Flags.string({ char: 'f', required: true }) };
//     async run(): Promise<void> {
//       const { runDiff } = await import('../../core/gate-diff.js'); // heavy modules: import() inside run
//       this.out.record({ … });                                  // this.flags / this.args are parsed
//       throw new CliError('…', { exitCode: ExitCode.Usage, suggestion: '…' }); // rendered by catch()
//     }
//   }
//
// init() parses argv (global flags --token/--base/--profile/--json included) and builds `this.out`;
// catch() renders any error (human or one JSON line on stderr) and exits with its exit code; Ctrl-C
// exits 130 with the cursor shown. Add the class to src/commands/index.ts to make it a command.
import { Command, Flags } from '@oclif/core';
import type { Interfaces } from '@oclif/core';
import { CliError, ExitCode, toCliError } from './errors.js';
import { jsonRequested, Output } from './output.js';
import { redactError } from './secrets.js';

export type GlobalFlags = Interfaces.InferredFlags<(typeof BaseCommand)['baseFlags']>;
export type CommandFlags<T extends typeof Command> = Interfaces.InferredFlags<
  (typeof BaseCommand)['baseFlags'] & T['flags']
>;
export type CommandArgs<T extends typeof Command> = Interfaces.InferredArgs<T['args']>;

const globalGroup = 'GLOBAL';

export abstract class BaseCommand<T extends typeof Command> extends Command {
  static override baseFlags = {
    token: Flags.string({
      description: 'API token for this call (first in precedence, before SERVICE_TOKEN and the profile).',
      helpGroup: globalGroup,
    }),
    base: Flags.string({
      description: 'API base URL (before SERVICE_API_URL and the profile).',
      helpGroup: globalGroup,
    }),
    // GDS_PROFILE and GDS_JSON as for every flag; no GDS_TOKEN or GDS_BASE: SERVICE_TOKEN and SERVICE_API_URL
    // already follow the flags in the one precedence of src/auth, and a second variable would confuse it.
    profile: Flags.string({
      description: 'Profile to use instead of the active one.',
      env: 'GDS_PROFILE',
      helpGroup: globalGroup,
    }),
    json: Flags.boolean({
      description:
        'NDJSON on stdout, errors as one JSON line on stderr (also GDS_CONTENT_TYPE=json or GDS_JSON=1).',
      env: 'GDS_JSON',
      helpGroup: globalGroup,
    }),
  };

  protected flags!: CommandFlags<T>;
  protected args!: CommandArgs<T>;
  protected out!: Output;

  override async init(): Promise<void> {
    await super.init();
    this.out = new Output({ json: jsonRequested(this.argv) });
    process.once('SIGINT', () => this.interrupt());
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
  }

  override async catch(error: Error): Promise<never> {
    if (isOclifExit(error)) throw error;
    const failure = toCliError(error, `See \`${this.config.bin} ${this.commandWords()} --help\`.`);
    (this.out ?? new Output({ json: jsonRequested(this.argv) })).error(redactError(failure, this.argv));
    this.exit(failure.exitCode);
  }

  private interrupt(): never {
    this.out.interrupted();
    if (this.out.json) {
      this.out.error(new CliError('Interrupted.', { exitCode: ExitCode.Interrupted }));
    }
    process.exit(ExitCode.Interrupted);
  }

  private commandWords(): string {
    return (this.id ?? '').split(':').join(' ');
  }
}

function isOclifExit(error: Error): boolean {
  return (error as { code?: unknown }).code === 'EEXIT';
}
