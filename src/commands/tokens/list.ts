import { Flags } from '@oclif/core';
import type { Column } from '../../cli/output-table.js';
import { ApiCommand } from '../../cli/api-command.js';
import { limitFlag } from '../../cli/list-flags.js';
import { listTokens } from '../../services/tokens.js';

type Row = Record<string, unknown>;
const text = (value: unknown) => (value === null || value === undefined ? '' : String(value));

const columns: ReadonlyArray<Column<Row>> = [
  { header: 'Name', kind: 'name', value: (t) => text(t.name) },
  { header: 'Kind', value: (t) => (t.kind === 'cli' ? 'CLI' : text(t.audience)) },
  { header: 'Token', kind: 'id', value: (t) => text(t.kind === 'cli' ? t.token : t.clientToken) },
  { header: 'Scopes', value: (t) => (Array.isArray(t.scopes) ? t.scopes.join(' ') : '') },
  { header: 'Env', kind: 'version', value: (t) => text(t.environment) },
  { header: 'Issued by', kind: 'who', value: (t) => text(t.issuedBy ?? t.userId) },
  { header: 'Created', kind: 'time', value: (t) => text(t.createdAt) },
  { header: 'Last used', kind: 'time', value: (t) => text(t.lastUsedAt) },
  { header: 'Revoked', kind: 'time', value: (t) => text(t.revokedAt) },
  { header: 'Id', kind: 'id', value: (t) => text(t.id) },
];

export default class TokensList extends ApiCommand<typeof TokensList> {
  static override pager = true;
  static override summary = 'List the tokens you can see: integration tokens and CLI tokens, masked.';
  static override description =
    'Your own CLI tokens (cli_…, gds auth token create) and integration tokens: an OWNER or ADMIN sees the ' +
    "workspace's integration tokens, anyone else the ones they issued. Each shows its name, kind (CLI, " +
    'DATA-API or MANAGEMENT), masked token (tf_abcd…wxyz, cli_abcd…wxyz), scopes, environment, who issued ' +
    'it, when it was created and last used, and when revoked. --cli keeps the CLI tokens; --user <e-mail> ' +
    "lists that person's tokens (another person's: an OWNER or ADMIN; an unknown e-mail is exit 5). Tokens " +
    'are never shown whole. Under --json one line per token, with kind "cli" or "integration".';
  static override examples = [
    '<%= config.bin %> tokens list',
    '<%= config.bin %> tokens list --cli -L 5',
    '<%= config.bin %> tokens list --user admin@example.com',
    '<%= config.bin %> tokens list --json | jq -r \'select(.kind == "integration" and .revokedAt == null) | .id\'',
  ];
  static override flags = {
    cli: Flags.boolean({
      description: 'Only CLI tokens (cli_…).',
      default: false,
    }),
    user: Flags.string({
      description: "Whose tokens: a member's e-mail (or usr_ id); yours and those you see by default.",
    }),
    limit: limitFlag,
  };

  async run(): Promise<void> {
    const { cli, user, limit } = this.flags;
    const tokens = await this.withClient((client) => listTokens(client, { cli, user }));
    await this.out.table(tokens, columns, {
      limit,
      empty: cli ? 'No CLI tokens.' : 'No tokens.',
      noun: 'tokens',
    });
  }
}
