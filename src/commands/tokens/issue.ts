import { Flags } from '@oclif/core';
import { ApiCommand } from '../../cli/api-command.js';
import { boundedText } from '../../cli/governance-flags.js';
import { MAX_TOKEN_NAME_CHARS } from '../../core/text-bounds.js';
import type { IssuedToken, TableGrant, WorkspaceScope } from '../../contract/types.js';
import { parseTableGrant, workspaceScopes, issueToken } from '../../services/tokens.js';
import {
  printSavedTokens,
  printTokenBundle,
  saveProfileFlags,
  tokenExpiries,
} from '../../cli/token-bundle.js';
import { resolveTableIds } from '../../services/table-ref.js';
import type { SavedIntegration } from '../../auth/integration-profile.js';
import { requestUnanswered, saveIntegrationTokens } from '../../auth/integration-profile.js';
import { finishBeforeExit, heldFailureExit } from '../../auth/finish-before-exit.js';
import { CliError } from '../../core/errors.js';
import { redactError } from '../../cli/secrets.js';

export default class TokensIssue extends ApiCommand<typeof TokensIssue> {
  static override summary = 'Issue an integration token for a machine: table grants or workspace scopes.';
  static override description =
    'Needs your own sign-in (a CLI token or a browser session) as the table owner or a workspace admin. ' +
    '--table grants give a DATA-API token for the table endpoints; --scope gives a MANAGEMENT token for the ' +
    'audit log, members, certification, definitions or recertification. One token holds one kind. --env names ' +
    'the environment the token works in, or * for every one. The access token (60 minutes) and the refresh ' +
    'token (30 days, single use) are shown once: gds does not store them and cannot show them again. With ' +
    '--save-profile <name> they are stored in that profile instead (and not shown; the client token, a label the ' +
    'API refuses, is still shown once for revocation scripts), and --profile <name> then calls with the token, ' +
    'renewing it as it expires. When they cannot be saved there (another gds at work on the profile, say), gds ' +
    'names the token to revoke, and shows no tokens; so does a Ctrl-C or SIGTERM while the save waits for that ' +
    'other gds (then exit 130 or 143). One while the request is out, with or without --save-profile, waits up to ' +
    '2 s for the answer, shown (or saved and said) before the exit; unanswered by then, gds says the token may ' +
    'have been issued (look for it: gds tokens list). A second one while the answer is being saved ends gds at once, ' +
    'naming the token, which may not have been saved.';
  static override examples = [
    '<%= config.bin %> tokens issue --name nightly-load --env production --table t_42:read,write --table t_43:read',
    "<%= config.bin %> tokens issue --name audit-export --env '*' --scope workspace:read:audit --json | jq -r .tokens.refreshToken",
    '<%= config.bin %> tokens issue --name ci --env dev --scope workspace:read:audit --save-profile ci',
  ];
  static override flags = {
    name: Flags.string({
      parse: boundedText('name', MAX_TOKEN_NAME_CHARS),
      description: 'A name that says what the token is for.',
      required: true,
    }),
    env: Flags.string({
      description: 'Environment label the token works in (dev, staging, production, …), or * for any.',
      required: true,
    }),
    table: Flags.custom<TableGrant>({
      description:
        'A table grant <table>:read, :write or :read,write, the table by id or name (repeatable): a DATA-API token.',
      multiple: true,
      exactlyOne: ['table', 'scope'],
      parse: async (input) => parseTableGrant(input),
    })(),
    scope: Flags.custom<WorkspaceScope>({
      description: 'A workspace scope (repeatable): a MANAGEMENT token.',
      multiple: true,
      options: [...workspaceScopes],
      exactlyOne: ['table', 'scope'],
    })(),
    ...saveProfileFlags,
  };

  async run(): Promise<void> {
    const { name, env, table, scope } = this.flags;
    const scopes = scope;
    const issue = () =>
      this.withClient(async (client, session) => {
        // A table name is looked up among the tables of the token's environment (any, for *).
        // The names in one request (up to 500), not a request each.
        const ids =
          table === undefined
            ? undefined
            : await resolveTableIds(
                client,
                table.map((grant) => grant.tableId),
                { ...(env === '*' ? {} : { env }), flag: '--table' },
              );
        const tables = table?.map((grant, i) => ({ ...grant, tableId: ids?.[i] ?? grant.tableId }));
        return { issued: await issueToken(client, { name, env, tables, scopes }), base: session.baseUrl };
      });
    const saveTo = this.flags['save-profile'];
    if (saveTo !== undefined) {
      await this.issueIntoProfile(saveTo, issue);
      return;
    }
    // The answer is the only place the token's secrets are, and its id the only way to end it: a Ctrl-C or SIGTERM
    // while it is on its way waits (bounded) for it to be shown, as tokens refresh waits; one not come by then is
    // said, with how to find the token the service may have issued.
    await finishBeforeExit(
      async () => {
        const { issued } = await issue();
        if (this.out.json) {
          this.out.record(issued);
          return;
        }
        this.printIssued(issued);
        printTokenBundle(this.out, issued.tokens);
      },
      undefined,
      {
        unanswered: (signal) =>
          this.out.error(redactError(requestUnanswered(signal, { issuing: name }), this.argv)),
        done: (_, signal) => this.sayInterruptedAfter(signal, 'the token was shown'),
        written: () => this.out.flush(),
      },
    );
  }

  private async issueIntoProfile(
    profileName: string,
    issue: () => Promise<{ issued: IssuedToken; base: string }>,
  ): Promise<void> {
    const saved = await saveIntegrationTokens(
      profileName,
      async () => {
        const { issued, base } = await issue();
        return { ...issued, issued, base };
      },
      {
        force: this.flags.force,
        issuing: this.flags.name,
        // A Ctrl-C or SIGTERM while the save waited, or before the service answered: the token not saved, named
        // to revoke (or to look for); then exit 130 or 143. Saved before the exit: said as without the signal.
        sayFailure: (error) => {
          if (!(error instanceof CliError)) return undefined;
          this.out.error(redactError(error, this.argv));
          return heldFailureExit(error);
        },
        saySaved: (done, signal) => {
          this.printSaved(done);
          this.sayInterruptedAfter(signal, 'the save finished');
        },
        warn: (message) => this.out.warn(message),
        written: () => this.out.flush(),
      },
    );
    this.printSaved(saved);
  }

  private printSaved(saved: SavedIntegration<{ issued: IssuedToken }>): void {
    const { issued } = saved.obtained;
    if (this.out.json) {
      this.out.record({
        ...issued,
        tokens: tokenExpiries(issued.tokens),
        profile: saved.saved.name,
        storage: saved.saved.storage,
      });
      return;
    }
    this.printIssued(issued);
    printSavedTokens(this.out, saved, issued.tokens);
  }

  private printIssued(issued: IssuedToken): void {
    this.out.success(
      `Issued ${issued.audience} token ${issued.id} "${issued.name}" for environment ${issued.env}.`,
    );
    this.out.printField(`Scopes:        ${issued.scopes.join(' ')}`);
    this.out.printField(
      `Client token:  ${issued.clientToken}  (a label for audits and revocation; the API never accepts it)`,
    );
  }
}
