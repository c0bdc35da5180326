import { Flags } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { revokeOwnCredential } from '../../services/tokens.js';
import { confirmOrStop, requireConfirmable } from '../../cli/prompt.js';
import { maskToken } from '../../core/redact.js';

export default class AuthRevoke extends ApiCommand<typeof AuthRevoke> {
  static override summary = 'Revoke the token this command would use: a CLI token, or a sign-in.';
  static override description =
    'The credential of --token, SERVICE_TOKEN or the profile is revoked on the service: a static CLI token ' +
    'is refused from its next request; a browser sign-in ends with all its tokens. The profile is kept ' +
    '(gds auth logout forgets it; gds auth login signs in again). Asks for confirmation on a terminal; ' +
    'without a terminal it refuses (exit 2) unless --yes. Under --json one line {revoked: true}.';
  static override examples = [
    '<%= config.bin %> auth revoke',
    '<%= config.bin %> auth revoke --profile old-laptop',
    'SERVICE_TOKEN=$LEAKED_CLI_TOKEN <%= config.bin %> auth revoke --yes --json',
  ];
  static override flags = {
    yes: Flags.boolean({ char: 'y', description: 'Revoke without asking.' }),
  };

  async run(): Promise<void> {
    const { yes } = this.flags;
    requireConfirmable('auth revoke', yes, 'revoke the token');
    await this.withClient(async (client, session) => {
      const credentials = session.credentials;
      const which =
        credentials === undefined
          ? 'the token'
          : `${maskToken(credentials.token)} (${credentials.profileName === undefined ? credentials.tokenSource : `profile ${credentials.profileName}`})`;
      await confirmOrStop(
        yes,
        `Revoke ${which} on ${session.baseUrl}? It is refused from its next request, for good.`,
        `Not revoked: ${which} still works.`,
      );
      await revokeOwnCredential(client);
    });
    if (this.out.json) this.out.record({ revoked: true });
    else this.out.success('Revoked: this token is refused from now on. Sign in again with gds auth login.');
  }
}
