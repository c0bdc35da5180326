import { ApiCommand } from '../cli/api-command.js';
import { reviewQueuePages } from '../services/review.js';
import { canAsk } from '../cli/prompt.js';
import { queueColumns, walkQueue } from '../cli/review-walk.js';

export default class Review extends ApiCommand<typeof Review> {
  static override summary = "Walk the steward's queue: the tables submitted for review.";
  static override description =
    'A STEWARD or above. Lists each table gds gate submit handed over, oldest first: its Gate 1 proof, what ' +
    'changed since its last certified version (definition, gate1.yml, data) and its open recertification ' +
    'requests. On a terminal it then walks the queue table by table: certify (needs a browser sign-in, as gds ' +
    'certify does; only the submission shown: one filed since is refused and waits for the next gds review), ' +
    'reject with a reason, skip, or quit. Piped it only lists (tab-separated); under --json one line per table.';
  static override examples = [
    '<%= config.bin %> review',
    '<%= config.bin %> review --json',
    "<%= config.bin %> review --json | jq -r 'select(.proof.passed) | .tableId'",
  ];

  async run(): Promise<void> {
    const walk = !this.out.json && this.out.stdout.isTTY === true && canAsk();
    await this.withClient(async (client, session) => {
      if (!walk) {
        await this.out.tablePages(reviewQueuePages(client), queueColumns, {
          empty: 'Nothing is waiting for review.',
          noun: 'tables',
        });
        return;
      }
      await walkQueue(this.out, client, session, reviewQueuePages(client));
    });
  }
}
