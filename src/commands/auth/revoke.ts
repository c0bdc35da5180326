import { ApiCommand } from '../../cli/api-command.js';

export default class AuthRevoke extends ApiCommand<typeof AuthRevoke> {
  static override summary = 'Revoke the token this command would use: a CLI token, or a sign-in.';
  static override description =
    'The credential of --token, SERVICE_TOKEN or the profile is revoked on the service: a static CLI token ' +
    'is refused from its next request; a browser sign-in ends with all its tokens. The profile is kept ' +
    '(gds auth logout forgets it; gds auth login signs in again). Under --json one line {revoked: true}.';
  static override examples = [
    '<%= config.bin %> auth revoke',
    '<%= config.bin %> auth revoke --profile old-laptop',
    'SERVICE_TOKEN=$LEAKED_CLI_TOKEN <%= config.bin %> auth revoke --json',
  ];

  async run(): Promise<void> {
    const { revokeOwnCredential } = await import('../../services/tokens.js');
    await this.withClient((client) => revokeOwnCredential(client));
    if (this.out.json) this.out.record({ revoked: true });
    else this.out.print('Revoked: this token is refused from now on. Sign in again with gds auth login.');
  }
}
