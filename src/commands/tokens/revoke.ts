import { Args } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';

export default class TokensRevoke extends ApiCommand<typeof TokensRevoke> {
  static override summary =
    'Revoke an integration token (by its tf_ client token or id) or a CLI token (by id).';
  static override description =
    'An OWNER or ADMIN. An integration token named by its tf_… client token or its itk_… id: its access ' +
    'tokens are refused (401) from their next request and its refresh tokens are spent at once. A CLI token ' +
    'named by its clt_… id (gds tokens list --cli) is refused from its next request. Audited. Revoking a ' +
    'revoked token changes nothing. Under --json one line: the token as listed.';
  static override examples = [
    '<%= config.bin %> tokens revoke tf_3kQ9xY…',
    '<%= config.bin %> tokens revoke itk_5b1e0c2d9a7f4e31',
    '<%= config.bin %> tokens revoke clt_0f4c2a9e81d34b77 --json',
  ];
  static override args = {
    token: Args.string({
      description: 'A tf_… client token, an itk_… integration token id, or a clt_… CLI token id.',
      required: true,
    }),
  };

  async run(): Promise<void> {
    const { revocationTarget, revokeToken } = await import('../../services/tokens.js');
    revocationTarget(this.args.token);
    const token = await this.withClient((client) => revokeToken(client, this.args.token));
    if (this.out.json) this.out.record(token);
    else this.out.print(`Revoked ${String(token.id)} (${String(token.clientToken ?? token.token)}).`);
  }
}
