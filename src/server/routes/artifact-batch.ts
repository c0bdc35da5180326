// `POST /api/artifacts/batch`: what `gds apply` writes for many tables in one request. Each item goes through
// the single writes' own functions, in order (the definition as POST /api/artifacts, its gate1.yml as PUT
// .../gate1, its contract intent as PATCH .../semantic-contract), with their authorization, ownership and
// If-Match rules, each step in its own transaction; what each step would have answered is reported per item.
// An item stops at its first failed step, as gds's table-by-table writes do.
// The item's project (else its definition's) goes with its gate1.yml and intent as their `?project=`.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Schema } from '../../contract/types.js';
import { checkArtifactBodySize, checkArtifactBounds } from '../artifact-bounds.js';
import type { SessionCaller } from '../auth/caller.js';
import { requireSession } from '../auth/caller.js';
import type { AppContext } from '../context.js';
import { callerOf, guardBeforeBody } from '../context.js';
import { parseBody } from '../contract.js';
import { answerOf, badRequest, errorBody, internalError } from '../errors.js';
import { MAX_ID_LENGTH } from '../ids.js';
import { checkIds } from '../input-rule.js';
import {
  checkProjectId,
  readDefinitionBody,
  registerDefinition,
  withPrecondition,
} from '../governance/definitions.js';
import { gateTableOf } from '../gates/access.js';
import { checkIntentCaller, setIntent } from './contract.js';
import { applyGate1 } from './gates.js';

type Item = Schema<'ArtifactBatchItem'>;
type Step = Schema<'ArtifactBatchStep'>;
type ItemResult = Schema<'ArtifactBatchItemResult'>;

export function artifactBatchRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.post('/api/artifacts/batch', guardBeforeBody(requireSession), async (request) => {
    const caller = requireSession(await callerOf(ctx, request));
    const { items } = parseBody<Schema<'ArtifactBatchRequest'>>('ArtifactBatchRequest', request.body);
    const results: ItemResult[] = [];
    // One item after another: registrations take the workspace's registration lock one at a time anyway.
    for (const [index, item] of items.entries())
      results.push(await writeItem(ctx, caller, index, item, request.log));
    const body: Schema<'ArtifactBatchResult'> = { results };
    return body;
  });
}

async function writeItem(
  ctx: AppContext,
  caller: SessionCaller,
  index: number,
  item: Item,
  log: FastifyBaseLogger,
): Promise<ItemResult> {
  const failed = (error: unknown) => failedStep(error, log);
  const step = (write: () => Promise<Step>) => write().catch(failed);
  let tableId: string;
  let definition: Step | undefined;
  let project: string | undefined;
  try {
    project = itemProject(item);
  } catch (error) {
    return { index, tableId: null, definition: failed(error) };
  }
  if (item.definition === undefined) {
    if (item.tableId === undefined)
      return {
        index,
        tableId: null,
        definition: failed(
          badRequest(
            'invalid_request',
            'An item names a definition, or the tableId whose gate1.yml and intent it writes.',
          ),
        ),
      };
    tableId = item.tableId;
  } else {
    try {
      checkArtifactBodySize(item.definition);
      const input = withPrecondition(readDefinitionBody(item.definition, false), item.definitionVersion);
      checkArtifactBounds(input);
      const outcome = await registerDefinition(ctx, caller, input, 'push');
      tableId = outcome.body.tableId;
      definition = {
        status: outcome.status,
        changed: outcome.body.changed !== false,
        version: outcome.body.definitionVersion,
      };
    } catch (error) {
      return { index, tableId: null, definition: failed(error) };
    }
  }
  // An id too long to be one is each step's 404 (checkIds), and is not said back as the item's table.
  const result: ItemResult = {
    index,
    tableId: tableId.length > MAX_ID_LENGTH ? null : tableId,
    ...(definition === undefined ? {} : { definition }),
  };
  const gate1 = item.gate1;
  if (gate1 !== undefined) {
    result.gate1 = await step(async () => {
      checkIds({ tableId });
      const table = await gateTableOf(ctx, caller, tableId);
      const applied = await applyGate1(ctx, caller, table, gate1.content, () => gate1.version, project);
      return { status: 200, changed: applied.changed !== false, version: applied.version };
    });
    // The intent is not written over a gate1.yml that was not.
    if (result.gate1.error !== undefined) return result;
  }
  const intent = item.intent;
  if (intent !== undefined) {
    result.contract = await step(async () => {
      checkIds({ tableId });
      await checkIntentCaller(ctx, caller, tableId);
      const set = await setIntent(ctx, caller, tableId, intent.request, () => intent.revision, project);
      return { status: 200, changed: set.changed === true, version: set.contract.revision ?? 0 };
    });
  }
  return result;
}

/** The project the item's gate1.yml and intent are written for: its own, else its definition's (400 if both differ). */
function itemProject(item: Item): string | undefined {
  const own = item.project === undefined ? undefined : checkProjectId(item.project, 'project');
  const theirs = item.definition?.project;
  if (own !== undefined && theirs !== undefined && own !== theirs)
    throw badRequest(
      'invalid_request',
      `The item's project (${own}) and its definition's (${theirs}) differ: send one project for the item.`,
      { field: 'project' },
    );
  return own ?? theirs;
}

/**
 * What the single write would have answered for `error` (src/server/errors.ts's one mapping): a failure it does
 * not name is the single write's 500, logged as there, and the batch goes on with the next item (the step's
 * transaction was rolled back; the items before it stay written, and are reported).
 */
function failedStep(error: unknown, log: FastifyBaseLogger): Step {
  let answer = answerOf(error);
  if (answer === undefined) {
    log.error({ err: error }, 'unhandled error in a batch step');
    answer = internalError();
  }
  return {
    status: answer.status,
    changed: false,
    error: errorBody(answer.code, answer.message, answer.details),
  };
}
