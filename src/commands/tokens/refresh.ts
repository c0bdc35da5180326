import { Flags } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { printTokenBundle } from '../../cli/token-bundle.js';

export default class TokensRefresh extends ApiCommand<typeof TokensRefresh> {
  static override summary = 'Spend a refresh token for a new access token and a new refresh token.';
  static override description =
    'Single use (§4.2): the refresh token given is spent, and presenting it again revokes every token of its ' +
    'family. Without --refresh-token, or with --refresh-token -, the refresh token is read from stdin so it ' +
    'stays out of the shell history. Needs only the API base (--base, SERVICE_API_URL or a profile): no token ' +
    'is sent. The new tokens are shown once: gds does not store them.';
  static override examples = [
    'printf %s "$REFRESH_TOKEN" | <%= config.bin %> tokens refresh',
    '<%= config.bin %> tokens refresh --refresh-token - --json < refresh-token.txt | jq -r .tokens.accessToken',
  ];
  static override flags = {
    'refresh-token': Flags.string({
      description: 'The refresh token, or - to read it from stdin (the default).',
      env: 'GDS_REFRESH_TOKEN',
    }),
  };

  async run(): Promise<void> {
    const { refreshToken } = await import('../../services/tokens.js');
    const given = this.flags['refresh-token'] ?? '-';
    const presented = given === '-' ? await this.readRefreshToken() : given;
    const refreshed = await this.withClient((client) => refreshToken(client, presented), {
      authenticated: false,
    });
    if (this.out.json) {
      this.out.record(refreshed);
      return;
    }
    this.out.print('Refreshed. The refresh token you gave is spent.');
    printTokenBundle(this.out, refreshed.tokens);
  }

  private async readRefreshToken(): Promise<string> {
    const { readTextInput } = await import('../../cli/input.js');
    const { CliError, ExitCode } = await import('../../cli/errors.js');
    const text = (await readTextInput('-', { flag: '--refresh-token' })).text.trim();
    if (text === '') {
      throw new CliError('No refresh token on stdin.', {
        exitCode: ExitCode.Usage,
        code: 'missing_refresh_token',
        suggestion:
          'Pipe it in (printf %s "$REFRESH_TOKEN" | gds tokens refresh) or pass --refresh-token <value>.',
      });
    }
    return text;
  }
}
