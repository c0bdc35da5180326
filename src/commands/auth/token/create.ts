import { Flags } from '@oclif/core';
import { ApiCommand } from '../../../cli/api-command.js';
import { boundedText } from '../../../cli/governance-flags.js';
import { MAX_TOKEN_NAME_CHARS } from '../../../core/text-bounds.js';
import { shellWord } from '../../../core/shell-word.js';
import { createCliToken } from '../../../services/tokens.js';

export default class AuthTokenCreate extends ApiCommand<typeof AuthTokenCreate> {
  static override summary = 'Create a long-lived CLI token (cli_…) for scripts and CI, shown once.';
  static override description =
    'Needs a browser sign-in (gds auth login): a CLI token does not make another. The token acts as you ' +
    '(your role and environments) wherever a sign-in does, except certify, until revoked, and does not ' +
    'expire; steps that take a MANAGEMENT or DATA-API token (recertify, definitions push) draw a 60-minute one ' +
    'on it as they run, so a CI job needs only this secret. The token is printed whole on stdout, this once ' +
    '(gds does not keep it): store it straight away, e.g. as the CI secret GDS_CLI_TOKEN. gds tokens list ' +
    'shows it masked, gds tokens revoke NAME ends it. The name is unique among your live tokens. Under --json ' +
    'one line {id, name, token, userId, createdAt}.';
  static override examples = [
    '<%= config.bin %> auth token create --name ci',
    '<%= config.bin %> auth token create --name ci | gh secret set GDS_CLI_TOKEN',
    '<%= config.bin %> auth token create --name nightly --json | jq -r .token',
  ];
  static override flags = {
    name: Flags.string({
      parse: boundedText('name', MAX_TOKEN_NAME_CHARS),
      description: 'What the token is for (unique among your live tokens).',
      required: true,
    }),
  };

  async run(): Promise<void> {
    const created = await this.withClient((client, session) =>
      createCliToken(client, session.credentials, this.flags.name),
    );
    if (this.out.json) {
      this.out.record(created);
      return;
    }
    this.out.print(created.token);
    this.out.info(
      `Created CLI token "${created.name}" (${created.id}). It is shown this once: store it now (e.g. as GDS_CLI_TOKEN); gds tokens revoke ${shellWord(created.name)} ends it.`,
    );
  }
}
