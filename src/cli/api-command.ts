// The base of every command that calls the service. It adds --max-retry-after to the global flags and
// `withClient`, which runs the command's one service call in a session (session.ts):
//
//   import { listMembers } from '../../services/members.js'; // static: see base-command.ts's Imports
//
//   export default class MembersList extends ApiCommand<typeof MembersList> {
//     static override summary = 'List the members of your workspace.';
//     static override examples = ['<%= config.bin %> members list --json'];
//     async run(): Promise<void> {
//       const members = await this.withClient((client) => listMembers(client));
//       await this.out.table(members, memberColumns);
//     }
//   }
import type { Command } from '@oclif/core';
import { Flags } from '@oclif/core';
import type { ApiClient } from '../client/index.js';
import { BaseCommand } from './base-command.js';
import { GLOBAL_FLAGS } from './global-flags.js';
import type { Session, SessionInput } from './session.js';
import { resolveTableId } from '../services/table-ref.js';
import { withSession } from './session.js';

export abstract class ApiCommand<T extends typeof Command> extends BaseCommand<T> {
  static override baseFlags = {
    ...BaseCommand.baseFlags,
    'max-retry-after': Flags.integer({ ...GLOBAL_FLAGS['max-retry-after'], min: 0, helpGroup: 'GLOBAL' }),
  };

  /**
   * The table id to send for a table argument or flag: an id as it is, a name looked up once per process
   * (src/services/table-ref.ts); the command's `--env`, when it has one, picks among tables of one name.
   */
  protected async tableIdOf(client: ApiClient, ref: string, flag?: string): Promise<string> {
    const { env } = this.flags as { env?: unknown };
    return resolveTableId(client, ref, {
      ...(typeof env === 'string' ? { env } : {}),
      ...(flag === undefined ? {} : { flag }),
    });
  }

  /** How a reply names a table: by the name the person gave, else by its id (`Created record … in orders`). */
  protected tableLabel(ref: string, tableId: string): string {
    return ref === tableId ? tableId : ref;
  }

  /** Runs `work` with a client holding the resolved credentials; client errors become CliErrors. */
  protected async withClient<R>(
    work: (client: ApiClient, session: Session) => Promise<R>,
    options: Pick<SessionInput, 'authenticated' | 'draw'> = {},
  ): Promise<R> {
    const flags = this.flags as typeof this.flags & { 'max-retry-after'?: number };
    return withSession(
      {
        flags: {
          token: flags.token,
          base: flags.base,
          profile: flags.profile,
          'max-retry-after': flags['max-retry-after'],
        },
        version: this.config.version,
        warn: (message) => this.out.warn(message),
        ...options,
      },
      (session) => work(session.client, session),
    );
  }
}
