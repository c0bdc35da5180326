import { BaseCommand } from '../../cli/base-command.js';
import { warnEnvOverProfile } from '../../cli/session.js';
import { resolveCredentials } from '../../auth/credentials.js';

export default class AuthToken extends BaseCommand<typeof AuthToken> {
  static override summary = 'Print the token gds would use, for piping into another tool.';
  static override description =
    'With gds auth token create (which prints a new CLI token once), the one place gds prints a token whole ' +
    '(everywhere else it is masked). The same precedence as every ' +
    'call: --token, then SERVICE_TOKEN, then the profile (--profile or the active one). Under --json one ' +
    'line {token, tokenSource, profile}. A browser sign-in prints its current access token, which expires ' +
    'within the hour: run any command (gds whoami) first to have it renewed.';
  static override examples = [
    'curl -H "Authorization: Bearer $(<%= config.bin %> auth token)" https://gds.example.com/api/me',
    '<%= config.bin %> auth token --profile staging | pbcopy',
  ];

  async run(): Promise<void> {
    const { token, base, profile } = this.flags;
    const warn = (m: string) => this.out.warn(m);
    const credentials = await resolveCredentials({ token, base, profile }, process.env, { warn });
    warnEnvOverProfile({ profile }, credentials, warn);
    if (this.out.json) {
      this.out.record({
        token: credentials.token,
        tokenSource: credentials.tokenSource,
        profile: credentials.profileName ?? null,
      });
      return;
    }
    this.out.print(credentials.token);
  }
}
