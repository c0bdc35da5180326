import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import type { CliError } from '../../core/errors.js';
import { ExitCode } from '../../core/errors.js';
import { toCliError } from '../../cli/errors.js';
import type { Me } from '../../cli/signed-in.js';
import type { Segment } from '../../cli/segment.js';
import type { CredentialSource } from '../../auth/credentials.js';
import { signedInAs } from '../../cli/signed-in.js';
import { credentialStatus } from '../../auth/credentials.js';

/** The widest label (`Signed in:`) and a space. */
const LABEL_WIDTH = 11;

export default class AuthStatus extends BaseCommand<typeof AuthStatus> {
  static override summary = 'Show which API base and token a command would use, and where they come from.';
  static override description =
    'Applies the same precedence as every command (--token/--base, then SERVICE_TOKEN/SERVICE_API_URL, then ' +
    '--profile or the active profile) and shows the token masked, where each value came from, where the ' +
    'token is stored, and the other profiles. Then it asks the service who the token signs in as (GET ' +
    '/api/me): user, role, expiry and the base URL of each door (REST, GraphQL, MCP); exit 1 when the service refuses the token or cannot be reached, or ' +
    'when there are no credentials at all (as gh auth status). --offline skips that call (exit 0 even when ' +
    'nothing is configured: check "signedIn" in the --json line).';
  static override examples = [
    '<%= config.bin %> auth status',
    '<%= config.bin %> auth status --profile staging',
    '<%= config.bin %> auth status --json',
    '<%= config.bin %> auth status --offline',
  ];
  static override flags = {
    offline: Flags.boolean({ description: 'Do not ask the service: show only what is configured.' }),
  };

  async run(): Promise<void> {
    const { token, base, profile } = this.flags;
    const status = await credentialStatus({ token, base, profile }, process.env, {
      warn: (m) => this.out.warn(m),
    });
    const check = this.flags.offline || !status.signedIn ? undefined : await this.askService();
    const notSignedIn = !status.signedIn && this.flags.offline !== true;
    if (check?.refused !== undefined || notSignedIn) process.exitCode = ExitCode.Failure;
    if (this.out.json) {
      this.out.record({
        ...status,
        ...(check === undefined
          ? {}
          : {
              verified: check.me !== undefined,
              email: check.me?.user.email ?? null,
              role: check.me?.role ?? null,
              doors: check.me?.doors ?? null,
              refused:
                check.refused === undefined
                  ? null
                  : { code: check.refused.code, message: check.refused.message },
            }),
      });
      return;
    }
    if (check?.me !== undefined) {
      this.out.printField(this.label('Signed in'), `${check.me.user.email} (${check.me.role})`);
    }
    if (status.expiresAt !== null)
      this.out.printField(this.label('Expires'), this.out.when(status.expiresAt));
    const doors = check?.me?.doors;
    if (doors !== undefined)
      this.out.printField(
        this.label('Doors'),
        `REST ${doors.rest}  GraphQL ${doors.graphql}  MCP ${doors.mcp}`,
      );
    if (check?.refused !== undefined) {
      this.out.printField(this.label('Refused', 'red'), check.refused.message);
      // The suggestion's own lines (the ways to get a token, under a refused one) each a line, as under an error.
      for (const line of check.refused.suggestionLines?.lines ?? []) this.out.printField(`  ${line}`);
    }
    this.out.printField(
      this.label('API base'),
      status.baseUrl === null
        ? 'none'
        : `${status.baseUrl} (from ${sourceText(status.baseSource, 'SERVICE_API_URL')})`,
    );
    this.out.printField(
      this.label('Token'),
      status.token === null
        ? 'none'
        : `${status.token} (from ${sourceText(status.tokenSource, 'SERVICE_TOKEN')})`,
    );
    if (status.storageLocation !== null) {
      this.out.printField(this.label('Stored in'), status.storageLocation);
    }
    if (status.profiles.length === 0) {
      this.out.printField(this.label('Profiles'), `none (${status.configPath})`);
    } else {
      this.out.print(this.out.style('bold', 'Profiles:'));
    }
    const width = (pick: (p: (typeof status.profiles)[number]) => string) =>
      Math.max(0, ...status.profiles.map((p) => pick(p).length));
    const userOf = (p: (typeof status.profiles)[number]) => p.user ?? '-';
    const [nameWidth, baseWidth, kindWidth, userWidth] = [
      width((p) => p.name),
      width((p) => p.base),
      width((p) => p.kind),
      width(userOf),
    ];
    for (const p of status.profiles) {
      this.out.printField(
        `  ${p.active ? '*' : ' '} ${p.name.padEnd(nameWidth)}  ${p.base.padEnd(baseWidth)}  ` +
          `${userOf(p).padEnd(userWidth)}  ${p.kind.padEnd(kindWidth)}  token in ${p.storage}`,
      );
    }
    if (status.signedIn) return;
    this.out.print(this.out.style('yellow', 'Not signed in:'));
    for (const problem of status.problems) this.out.print(`  ${problem}`);
    this.out.print(
      'Get credentials with `gds auth set --token <t> --base <url>`, `gds auth login`, or SERVICE_TOKEN in CI.',
    );
  }

  /** A label of the status lines, padded so that every value starts in the same column. */
  private label(text: string, colour: 'bold' | 'red' = 'bold'): Segment {
    return this.out.style(colour, `${text}:`.padEnd(LABEL_WIDTH));
  }

  /** GET /api/me with the same credentials: who the token signs in as, or why the service refused it. */
  private async askService(): Promise<ServiceCheck> {
    const { token, base, profile } = this.flags;
    try {
      return {
        me: await signedInAs({
          flags: { token, base, profile },
          version: this.config.version,
          warn: (m) => this.out.warn(m),
        }),
      };
    } catch (error) {
      return { refused: toCliError(error, 'Run gds auth status --offline to see the local set-up only.') };
    }
  }
}

interface ServiceCheck {
  me?: Me;
  refused?: CliError;
}

function sourceText(source: CredentialSource | null, variable: string): string {
  if (source === 'flag') return 'a flag';
  if (source === 'env') return variable;
  return source === null ? 'nowhere' : `profile ${source.slice('profile:'.length)}`;
}
