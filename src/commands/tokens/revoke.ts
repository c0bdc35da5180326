import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';

export default class TokensRevoke extends ApiCommand<typeof TokensRevoke> {
  static override summary =
    'Revoke an integration token (by its tf_ client token or id) or a CLI token (by id).';
  static override description =
    'An OWNER or ADMIN. An integration token named by its tf_… client token or its itk_… id: its access ' +
    'tokens are refused (401) from their next request and its refresh tokens are spent at once. A CLI token ' +
    'named by its clt_… id (gds tokens list --cli) is refused from its next request. Audited. Revoking a ' +
    'revoked token changes nothing. Asks for confirmation on a terminal; without a terminal it refuses ' +
    '(exit 2) unless --yes. Under --json one line: the token as listed.';
  static override examples = [
    '<%= config.bin %> tokens revoke tf_3kQ9xY…',
    '<%= config.bin %> tokens revoke itk_5b1e0c2d9a7f4e31',
    '<%= config.bin %> tokens revoke clt_0f4c2a9e81d34b77 --yes --json',
  ];
  static override args = {
    token: Args.string({
      description: 'A tf_… client token, an itk_… integration token id, or a clt_… CLI token id.',
      required: true,
    }),
  };
  static override flags = {
    yes: Flags.boolean({ char: 'y', description: 'Revoke without asking.' }),
  };

  async run(): Promise<void> {
    const { revocationTarget, revokeToken } = await import('../../services/tokens.js');
    const { confirmOrStop, requireConfirmable } = await import('../../cli/prompt.js');
    const { maskToken } = await import('../../core/redact.js');
    const kind = revocationTarget(this.args.token);
    const { yes } = this.flags;
    const named = this.args.token.startsWith('tf_') ? maskToken(this.args.token) : this.args.token;
    requireConfirmable('tokens revoke', yes, `revoke ${named}`);
    await confirmOrStop(
      yes,
      kind === 'cli'
        ? `Revoke CLI token ${named}? It is refused from its next request, for good.`
        : `Revoke integration token ${named}? Its access tokens are refused from their next request and its refresh tokens are spent, for good.`,
      `Not revoked: ${named} is unchanged.`,
    );
    const token = await this.withClient((client) => revokeToken(client, this.args.token));
    if (this.out.json) this.out.record(token);
    else this.out.print(`Revoked ${String(token.id)} (${String(token.clientToken ?? token.token)}).`);
  }
}
