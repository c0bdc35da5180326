import { Args } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { COMPLETION_SCRIPTS, COMPLETION_SETUP, COMPLETION_SHELLS } from '../cli/completion-scripts.js';
import type { CompletionShell } from '../cli/completion-scripts.js';
import { CliError, ExitCode } from '../core/errors.js';

export default class Completion extends BaseCommand<typeof Completion> {
  static override summary = 'Print the shell completion script for bash, zsh, fish or PowerShell.';
  static override description =
    "Set up once, in your shell's start-up file:\n\n" +
    COMPLETION_SHELLS.map((shell) => `  ${COMPLETION_SETUP[shell]}`).join('\n') +
    '\n\nIt completes commands, flags and their values (--state, --gate, …), profiles, and what the service ' +
    'holds: table names and ids, connector ids, job ids, recertification requests and environments. Those ' +
    'are asked of the service with the credentials a command would use, kept for 20 seconds under ' +
    '$XDG_CACHE_HOME/gds/complete, and left out when the service does not answer within 2 seconds. The ' +
    'script is no record: under --json (or GDS_JSON=1) the command refuses (exit 2) rather than print it ' +
    'where NDJSON is expected.';
  // What @oclif/plugin-autocomplete answered to until gds's own completion replaced it: one command per job,
  // as gh, with the old name still running this one.
  static override hiddenAliases = ['autocomplete'];
  static override examples = [
    '<%= config.bin %> completion bash',
    'eval "$(<%= config.bin %> completion bash)"',
    'eval "$(<%= config.bin %> completion zsh)"   # in ~/.zshrc, after autoload -U compinit && compinit',
    '<%= config.bin %> completion zsh > "${fpath[1]}/_gds"   # or as a file on $fpath, then compinit',
    '<%= config.bin %> completion fish > ~/.config/fish/completions/gds.fish',
    '<%= config.bin %> completion powershell | Out-String | Invoke-Expression   # in $PROFILE',
  ];
  static override args = {
    shell: Args.string({
      description: 'The shell.',
      required: true,
      options: [...COMPLETION_SHELLS],
    }),
  };

  async run(): Promise<void> {
    if (this.out.json) {
      throw new CliError(
        'gds completion prints a shell script, and --json keeps stdout for NDJSON records.',
        {
          exitCode: ExitCode.Usage,
          code: 'stdout_taken',
          suggestion: `Drop --json (and unset GDS_JSON or GDS_CONTENT_TYPE): gds completion ${this.args.shell}`,
        },
      );
    }
    process.stdout.write(COMPLETION_SCRIPTS[this.args.shell as CompletionShell]);
  }
}
