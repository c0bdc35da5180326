import { ApiCommand } from '../cli/api-command.js';
import type { Schema } from '../contract/types.js';

type Me = Schema<'Me'>;

export default class Whoami extends ApiCommand<typeof Whoami> {
  static override summary =
    'Show who the credentials sign in as: profile, user, workspace, role, token scope, environments.';
  static override description =
    'Calls GET /api/me with the credentials every command uses (--token/--base, SERVICE_TOKEN/' +
    'SERVICE_API_URL, then the profile). A browser sign-in is renewed first when its access token expires ' +
    'within a minute; exit 3 with what to do when it cannot be.';
  static override examples = [
    '<%= config.bin %> whoami',
    '<%= config.bin %> whoami --profile staging --json',
  ];

  async run(): Promise<void> {
    const { me, profile, tokenSource } = await this.withClient(async (client, session) => ({
      me: (await client.request<Me>({ method: 'GET', path: '/api/me' })).data,
      profile: session.credentials?.profileName ?? null,
      tokenSource: session.credentials?.tokenSource ?? null,
    }));
    if (this.out.json) {
      this.out.record({ profile, tokenSource, ...me });
      return;
    }
    const from = tokenSource === 'flag' ? '--token' : tokenSource === 'env' ? 'SERVICE_TOKEN' : null;
    const rows: Array<[string, string]> = [
      [
        'Profile',
        from === null ? `${profile} (${describeKind(me.token.kind)})` : `none (token from ${from})`,
      ],
      ['User', `${me.user.displayName} <${me.user.email}>`],
      ['Workspace', `${me.workspace.name} (${me.workspace.id})`],
      ['Role', me.role],
      ['Token scope', describeScope(me.token)],
      ['Environments', me.effectiveEnvironmentScope.join(', ') || 'none'],
    ];
    for (const [label, value] of rows)
      this.out.printField(this.out.style('bold', `${label}:`.padEnd(14)), value);
  }
}

function describeKind(kind: Me['token']['kind']): string {
  if (kind === 'session') return 'browser sign-in';
  return kind === 'cli_token' ? 'CLI token' : 'integration token';
}

function describeScope(token: Me['token']): string {
  if (token.audience === 'session') return `personal (${describeKind(token.kind)}): whatever the role allows`;
  const env = token.environment === '*' ? 'any environment' : `environment ${token.environment ?? '?'}`;
  return `${token.audience}, ${env}: ${token.scopes.join(', ') || 'no scopes'}`;
}
