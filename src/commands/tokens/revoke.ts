import { Args, Flags } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { revocationTarget, revokeToken } from '../../services/tokens.js';
import { confirmOrStop, requireConfirmable } from '../../cli/prompt.js';

export default class TokensRevoke extends ApiCommand<typeof TokensRevoke> {
  static override summary =
    'Revoke a token by its NAME, its id, or (an integration token) its tf_ client token.';
  static override description =
    'Anyone revokes the tokens they hold or issued; an OWNER or ADMIN any of the workspace. NAME is the name ' +
    'gds tokens list shows (a live token of yours, or an integration token you see): a name no live token has ' +
    'is exit 5 with the nearest, one several tokens have is exit 2 listing their ids. An integration token ' +
    '(tf_… client token or itk_… id): its access tokens are refused (401) from their next request and its ' +
    'refresh tokens are spent at once. A CLI token (clt_… id): refused from its next request, with the ' +
    '60-minute tokens drawn on it. Audited. Revoking a revoked token changes nothing. Asks for confirmation ' +
    'on a terminal; without a terminal it refuses (exit 2) unless --yes. Under --json one line: the token as ' +
    'listed.';
  static override examples = [
    '<%= config.bin %> tokens revoke ci',
    '<%= config.bin %> tokens revoke tf_3kQ9xY…',
    '<%= config.bin %> tokens revoke itk_5b1e0c2d9a7f4e31',
    '<%= config.bin %> tokens revoke clt_0f4c2a9e81d34b77 --yes --json',
  ];
  static override args = {
    token: Args.string({
      description:
        'The token: its NAME, a tf_… client token, an itk_… integration token id, or a clt_… CLI token id. ' +
        'Prefer the NAME or id: a client token on the command line stays in the shell history.',
      required: true,
    }),
  };
  static override flags = {
    yes: Flags.boolean({ char: 'y', description: 'Revoke without asking.' }),
  };

  async run(): Promise<void> {
    const { yes } = this.flags;
    requireConfirmable(
      'tokens revoke',
      yes,
      `revoke ${this.args.token.startsWith('tf_') ? 'the token' : this.args.token}`,
    );
    const token = await this.withClient(async (client) => {
      const target = await revocationTarget(client, this.args.token);
      await confirmOrStop(
        yes,
        target.kind === 'cli'
          ? `Revoke ${target.label}? It is refused from its next request, for good.`
          : `Revoke ${target.label}? Its access tokens are refused from their next request and its refresh tokens are spent, for good.`,
        `Not revoked: ${target.label} is unchanged.`,
      );
      return revokeToken(client, target);
    });
    if (this.out.json) this.out.record(token);
    else
      this.out.success(
        `Revoked ${token.name === null || token.name === undefined ? '' : `"${String(token.name)}" `}${token.id} (${String(token.kind === 'cli' ? token.token : token.clientToken)}).`,
      );
  }
}
