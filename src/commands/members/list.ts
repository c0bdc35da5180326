import type { Column } from '../../cli/output-table.js';
import { ApiCommand } from '../../cli/api-command.js';
import type { Member } from '../../contract/types.js';
import { limitFlag } from '../../cli/list-flags.js';
import { listMembers } from '../../services/members.js';

const columns: ReadonlyArray<Column<Member>> = [
  { header: 'Email', kind: 'id', value: (m) => m.email },
  { header: 'Role', kind: 'version', value: (m) => m.role },
  { header: 'Environments', value: (m) => m.envScope.join(', ') },
  { header: 'User id', kind: 'id', value: (m) => m.userId },
];

export default class MembersList extends ApiCommand<typeof MembersList> {
  static override pager = true;
  static override summary = 'List the active members of your workspace.';
  static override description =
    "Management plane: a MANAGEMENT token with workspace:read:members, or any member's own sign-in. " +
    'Owners first, then admins, stewards and members, each by e-mail; platform operators never show. ' +
    'Under --json one line per member.';
  static override examples = [
    '<%= config.bin %> members list',
    '<%= config.bin %> members list --json | jq -r \'select(.role == "OWNER") | .email\'',
    'SERVICE_TOKEN=$MANAGEMENT_TOKEN <%= config.bin %> members list --json',
  ];

  static override flags = { limit: limitFlag };

  async run(): Promise<void> {
    const members = await this.withClient((client) => listMembers(client));
    await this.out.table(members, columns, {
      limit: this.flags.limit,
      empty: 'No members.',
      noun: 'members',
    });
  }
}
