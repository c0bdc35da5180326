import { Flags } from '@oclif/core';
import { type Column, NAME_RANK } from '../../cli/output.js';
import { ApiCommand } from '../../cli/api-command.js';

type Row = Record<string, unknown>;
const text = (value: unknown) => (value === null || value === undefined ? '' : String(value));

const integrationColumns: ReadonlyArray<Column<Row>> = [
  { header: 'Name', value: (t) => text(t.name), rank: NAME_RANK },
  { header: 'Client token', kind: 'id', value: (t) => text(t.clientToken) },
  { header: 'Audience', value: (t) => text(t.audience) },
  { header: 'Scopes', value: (t) => (Array.isArray(t.scopes) ? t.scopes.join(' ') : '') },
  { header: 'Env', kind: 'version', value: (t) => text(t.environment) },
  { header: 'Created', kind: 'time', value: (t) => text(t.createdAt) },
  { header: 'Last used', kind: 'time', value: (t) => text(t.lastUsedAt) },
  { header: 'Revoked', kind: 'time', value: (t) => text(t.revokedAt) },
  { header: 'Id', kind: 'id', value: (t) => text(t.id) },
];

const cliColumns: ReadonlyArray<Column<Row>> = [
  { header: 'Id', kind: 'id', value: (t) => text(t.id) },
  { header: 'Token', kind: 'id', value: (t) => text(t.token) },
  { header: 'Created', kind: 'time', value: (t) => text(t.createdAt) },
  { header: 'Last used', kind: 'time', value: (t) => text(t.lastUsedAt) },
  { header: 'Revoked', kind: 'time', value: (t) => text(t.revokedAt) },
  { header: 'User id', kind: 'id', value: (t) => text(t.userId) },
];

export default class TokensList extends ApiCommand<typeof TokensList> {
  static override pager = true;
  static override summary = "List the workspace's integration tokens, or a person's CLI tokens.";
  static override description =
    'An OWNER or ADMIN. Integration tokens show their name, masked client token (tf_abcd…wxyz), audience, ' +
    'scopes, environment, when they were created and last used, and when revoked. --cli lists CLI tokens ' +
    'instead: your own, or with --user another person’s. Tokens are never shown whole. Under --json one ' +
    'line per token.';
  static override examples = [
    '<%= config.bin %> tokens list',
    "<%= config.bin %> tokens list --json | jq -r 'select(.revokedAt == null) | .clientToken'",
    '<%= config.bin %> tokens list --cli',
    '<%= config.bin %> tokens list --cli --user usr_42 --json',
  ];
  static override flags = {
    cli: Flags.boolean({
      description: 'List CLI tokens (cli_…) instead of integration tokens.',
      default: false,
    }),
    user: Flags.string({
      description: 'Whose CLI tokens (a user id; implies --cli); yours by default.',
    }),
  };

  async run(): Promise<void> {
    const { listTokens } = await import('../../services/tokens.js');
    const { cli, user } = this.flags;
    const tokens = await this.withClient((client) =>
      listTokens(client, {
        cli: cli === true || user !== undefined,
        ...(user === undefined ? {} : { userId: user }),
      }),
    );
    await this.out.table(tokens, cli === true || user !== undefined ? cliColumns : integrationColumns, {
      empty: cli === true || user !== undefined ? 'No CLI tokens.' : 'No integration tokens.',
      noun: 'tokens',
    });
  }
}
