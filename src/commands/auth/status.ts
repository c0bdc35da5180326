import { BaseCommand } from '../../cli/base-command.js';
import type { CredentialSource } from '../../auth/credentials.js';

export default class AuthStatus extends BaseCommand<typeof AuthStatus> {
  static override summary = 'Show which API base and token a command would use, and where they come from.';
  static override description =
    'Applies the same precedence as every command (--token/--base, then SERVICE_TOKEN/SERVICE_API_URL, then ' +
    '--profile or the active profile) and shows the token masked, where each value came from, where the ' +
    'token is stored, and the other profiles. It does not call the server. Exit 0 even when nothing is ' +
    'configured: check "signedIn" in the --json line.';
  static override examples = [
    '<%= config.bin %> auth status',
    '<%= config.bin %> auth status --profile staging',
    '<%= config.bin %> auth status --json',
  ];

  async run(): Promise<void> {
    const { token, base, profile } = this.flags;
    const { credentialStatus } = await import('../../auth/credentials.js');
    const status = await credentialStatus({ token, base, profile }, process.env, {
      warn: (m) => this.out.warn(m),
    });
    if (this.out.json) {
      this.out.record(status);
      return;
    }
    this.out.print(
      this.out.style('bold', 'API base: '),
      status.baseUrl === null
        ? 'none'
        : `${status.baseUrl} (from ${sourceText(status.baseSource, 'SERVICE_API_URL')})`,
    );
    this.out.print(
      this.out.style('bold', 'Token:    '),
      status.token === null
        ? 'none'
        : `${status.token} (from ${sourceText(status.tokenSource, 'SERVICE_TOKEN')})`,
    );
    if (status.storageLocation !== null) {
      this.out.print(this.out.style('bold', 'Stored in: '), status.storageLocation);
    }
    if (status.profiles.length === 0) {
      this.out.print(this.out.style('bold', 'Profiles: '), `none (${status.configPath})`);
    } else {
      this.out.print(this.out.style('bold', 'Profiles:'));
    }
    for (const p of status.profiles) {
      this.out.print(`  ${p.active ? '*' : ' '} ${p.name}  ${p.base}  ${p.kind}  token in ${p.storage}`);
    }
    if (status.signedIn) return;
    this.out.print(this.out.style('yellow', 'Not signed in:'));
    for (const problem of status.problems) this.out.print(`  ${problem}`);
    this.out.print(
      'Get credentials with `gds auth set --token <t> --base <url>`, `gds auth login`, or SERVICE_TOKEN in CI.',
    );
  }
}

function sourceText(source: CredentialSource | null, variable: string): string {
  if (source === 'flag') return 'a flag';
  if (source === 'env') return variable;
  return source === null ? 'nowhere' : `profile ${source.slice('profile:'.length)}`;
}
