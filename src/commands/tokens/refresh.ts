import { Flags } from '@oclif/core';
import { TOKEN_READ_LIMIT_BYTES } from '../../core/artifact-bounds.js';
import { ApiCommand } from '../../cli/api-command.js';
import {
  printSavedTokens,
  printTokenBundle,
  saveProfileFlags,
  tokenExpiries,
} from '../../cli/token-bundle.js';
import { integrationClaims } from '../../core/jwt-claims.js';
import type { TokenBundle } from '../../contract/types.js';
import { refreshToken } from '../../services/tokens.js';
import { readTextInput } from '../../io/input.js';
import { CliError, ExitCode, restated } from '../../core/errors.js';
import { redactError } from '../../cli/secrets.js';
import { toCliError } from '../../cli/errors.js';
import { addRunSecret } from '../../core/redact.js';
import { finishBeforeExit, heldFailureExit } from '../../auth/finish-before-exit.js';
import type { SavedIntegration } from '../../auth/integration-profile.js';
import { requestUnanswered, saveIntegrationTokens } from '../../auth/integration-profile.js';

export default class TokensRefresh extends ApiCommand<typeof TokensRefresh> {
  static override summary = 'Spend a refresh token for a new access token and a new refresh token.';
  static override description =
    'Single use: the refresh token given is spent, and presenting it again revokes every token of its ' +
    'family at once (a service configured with a reuse grace answers it again with the same new tokens for a ' +
    'while, only as long as those are unused). Without --refresh-token, or with --refresh-token -, the refresh token is read from stdin so it ' +
    'stays out of the shell history. Needs only the API base (--base, SERVICE_API_URL or a profile): no token ' +
    'is sent. The new tokens are shown once: gds does not store them, unless --save-profile <name> says to store ' +
    'them in that profile (then they are not shown, and --profile <name> renews them as they expire; when they ' +
    'cannot be saved there, they are shown as without it and gds exits 1, so they are not lost; a Ctrl-C or ' +
    'SIGTERM while the save waits for another gds at work on that profile shows them too, then exits 130 or 143). ' +
    'A Ctrl-C or SIGTERM while the request is out, with or without --save-profile, waits up to 2 s for the ' +
    'answer, shown (or saved and said) before the exit; unanswered by then, gds says the refresh token given may ' +
    'be spent. A second one while the answer is being saved ends gds at once, showing the new tokens, which may not ' +
    'have been saved.';
  static override examples = [
    'printf %s "$REFRESH_TOKEN" | <%= config.bin %> tokens refresh',
    '<%= config.bin %> tokens refresh --refresh-token - --json < refresh-token.txt | jq -r .tokens.accessToken',
    'printf %s "$REFRESH_TOKEN" | <%= config.bin %> tokens refresh --save-profile ci',
  ];
  static override flags = {
    'refresh-token': Flags.string({
      description:
        'The refresh token, or - to read it from stdin (the default, and the way to use: a token on the ' +
        'command line stays in the shell history).',
    }),
    ...saveProfileFlags,
  };

  async run(): Promise<void> {
    const given = this.flags['refresh-token'] ?? '-';
    const presented = given === '-' ? await this.readRefreshToken() : given;
    const refresh = () =>
      this.withClient(
        async (client, session) => ({
          refreshed: await refreshToken(client, presented),
          base: session.baseUrl,
        }),
        { authenticated: false },
      ).catch((error: unknown) => {
        throw refusedRefresh(error);
      });
    const saveTo = this.flags['save-profile'];
    if (saveTo !== undefined) {
      const saved = await saveIntegrationTokens(
        saveTo,
        async () => {
          const { refreshed, base } = await refresh();
          // What the NEW token is for: never the old profile's fields, which it replaces.
          return { base, tokens: refreshed.tokens, ...integrationClaims(refreshed.tokens.accessToken) };
        },
        {
          force: this.flags.force,
          onlyCopy: true,
          showUnsaved: ({ tokens }) => this.show(tokens),
          // A Ctrl-C or SIGTERM while the save waited, or before the service answered: why the tokens were not
          // saved, then exit 130 or 143. Saved before the exit: said as without the signal.
          sayFailure: (error) => {
            if (!(error instanceof CliError)) return undefined;
            this.out.error(redactError(error, this.argv));
            return heldFailureExit(error);
          },
          saySaved: (done, signal) => {
            this.printSaved(done);
            this.sayInterruptedAfter(signal, 'the save finished');
          },
          warn: (message) => this.out.warn(message),
          written: () => this.out.flush(),
        },
      );
      this.printSaved(saved);
      return;
    }
    // The new tokens exist nowhere else once the service spent the one given: a Ctrl-C or SIGTERM while the
    // answer is on its way waits (bounded) for them to be shown, as a saved profile waits for its save. An answer
    // not come by then is said: the refresh token given may be spent.
    await finishBeforeExit(
      async () => {
        const { refreshed } = await refresh();
        if (!this.out.json) this.out.success('Refreshed. The refresh token you gave is spent.');
        this.show(refreshed.tokens);
      },
      undefined,
      {
        unanswered: (signal) => this.out.error(redactError(requestUnanswered(signal, {}), this.argv)),
        // The service's answer, not the signal, ended the refresh (a refusal): said as without the signal, with its
        // exit code.
        failure: (error) => {
          const failure = toCliError(error, 'See `gds tokens refresh --help`.');
          this.out.error(redactError(failure, this.argv));
          return heldFailureExit(failure);
        },
        done: (_, signal) => this.sayInterruptedAfter(signal, 'the new tokens were shown'),
        written: () => this.out.flush(),
      },
    );
  }

  private printSaved(saved: SavedIntegration<{ tokens: TokenBundle }>): void {
    const { tokens } = saved.obtained;
    if (this.out.json) {
      this.out.record({
        tokens: tokenExpiries(tokens),
        profile: saved.saved.name,
        storage: saved.saved.storage,
      });
      return;
    }
    this.out.success('Refreshed. The refresh token you gave is spent.');
    printSavedTokens(this.out, saved, tokens);
  }

  /** The new tokens, whole: on stdout, as the one record `{tokens}` under --json. */
  private show(tokens: TokenBundle): void {
    if (this.out.json) this.out.record({ tokens });
    else printTokenBundle(this.out, tokens);
  }

  private async readRefreshToken(): Promise<string> {
    const howTo =
      'Pipe it in (printf %s "$REFRESH_TOKEN" | gds tokens refresh) or pass --refresh-token <value>.';
    if (process.stdin.isTTY === true) {
      throw new CliError('gds tokens refresh reads the refresh token from stdin, and stdin is a terminal.', {
        exitCode: ExitCode.Usage,
        code: 'stdin_is_terminal',
        suggestion: howTo,
      });
    }
    const text = (
      await readTextInput('-', {
        flag: '--refresh-token',
        maxBytes: TOKEN_READ_LIMIT_BYTES,
        what: 'a refresh token',
      })
    ).text.trim();
    if (text === '') {
      throw new CliError('No refresh token on stdin.', {
        exitCode: ExitCode.Usage,
        code: 'missing_refresh_token',
        suggestion: howTo,
      });
    }
    // A secret of the run as --refresh-token's value is: masked wherever it is said back (a refusal that
    // quotes it), though no flag or variable holds it.
    addRunSecret(text);
    return text;
  }
}

/**
 * The service refused the refresh token (401: invalid, expired, or used already), which the service's words alone
 * leave without a next step: said with what to do.
 */
function refusedRefresh(error: unknown): unknown {
  if (!(error instanceof CliError) || error.exitCode !== ExitCode.Unauthenticated) return error;
  if (error.given.suggestion !== undefined) return error;
  return restated(error, {
    suggestion:
      'A refresh token works once, until it expires: keep the new one each refresh returns. To go on, issue a ' +
      'new token: gds tokens issue --name <name> --env <env> --scope <scope> (end the old one with gds tokens ' +
      'revoke <id>).',
  });
}
