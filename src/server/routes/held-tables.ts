// `GET /api/held-tables`: everything `gds plan` compares a dbt project with, for the tables of one
// environment, a page at a time: each table's list row, owner project, held definition, current gate1.yml and
// live contract; or, narrowed (`project`, `projectPrefix`, `filePrefix`, `name`), only the tables a plan of
// one project compares, its first page saying how many Mode A tables of the environment it left out. A plan of 2,000 models reads it in a handful of requests instead of three per table. Read
// with up to four queries per page (its rows in the list's order, then by id their contracts and the newest
// gate1.yml versions the server has not read before: gates/gate1-store.ts, newestGate1s), and for the
// tables waiting for review whether their submission's proof is stale.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Schema } from '../../contract/types.js';
import { inEnvironmentScope, requireEnvironment, requirePerson } from '../certification/access.js';
import { promotionTargets } from '../certification/promotion.js';
import type { LiveContract } from '../certification/contracts.js';
import { findContracts } from '../certification/contracts.js';
import type { AppContext } from '../context.js';
import { callerOf } from '../context.js';
import { newestGate1s } from '../gates/gate1-store.js';
import { staleSubmissions } from '../gates/proofs.js';
import type { HeldFilter } from '../governance/tables.js';
import { environmentTablePage, heldLeftOut } from '../governance/tables.js';
import { decodeListCursor, encodeListCursor } from '../list-cursor.js';
import type { Query } from '../query.js';
import { booleanParam, intParam, rejectUnknownParams, repeatedStringParam, stringParam } from '../query.js';
import { badRequest } from '../errors.js';
import { maySetIntent } from './contract.js';
import { heldDefinitionOf } from './promotions.js';

/** The live contract as GET .../semantic-contract answers it. */
function liveOf(contract: LiveContract, state: string): Schema<'LiveContract'> {
  const { tableId: _tableId, updatedAt: _updatedAt, ...live } = contract;
  return { ...live, status: state };
}

/** Names (and projects) one request may carry: as `GET /api/tables?name=`. */
const MAX_FILTER_VALUES = 500;

/** The narrowing of a held-tables read its query asks for; undefined for the whole environment. */
function heldFilterOf(query: Query): HeldFilter | undefined {
  const projects = repeatedStringParam(query, 'project', MAX_FILTER_VALUES);
  const projectPrefix = stringParam(query, 'projectPrefix');
  const filePrefix = stringParam(query, 'filePrefix');
  const names = repeatedStringParam(query, 'name', MAX_FILTER_VALUES);
  if ([projects, projectPrefix, filePrefix, names].every((v) => v === undefined)) return undefined;
  return {
    projects: projects ?? [],
    projectPrefix: projectPrefix ?? null,
    filePrefix: filePrefix ?? null,
    names: names ?? [],
  };
}

export function heldTableRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/api/held-tables', async (request: FastifyRequest<{ Querystring: Query }>) => {
    const caller = requirePerson(await callerOf(ctx, request));
    rejectUnknownParams(request.query, [
      'environment',
      'limit',
      'cursor',
      'project',
      'projectPrefix',
      'filePrefix',
      'name',
      'staleSubmission',
      'promotedTo',
    ]);
    const environment = stringParam(request.query, 'environment');
    if (environment === undefined)
      throw badRequest('invalid_query', 'environment is required: the label whose tables to read.', {
        parameter: 'environment',
      });
    requireEnvironment(caller, environment);
    const limit = intParam(request.query, 'limit', 1, 1000, 500);
    const cursor = stringParam(request.query, 'cursor');
    const filter = heldFilterOf(request.query);
    // false: the caller plans no submission (`gds plan` without --submit), so the query of which submissions
    // are stale, a good part of a page of many tables waiting for review, is not run. Default: run it.
    const withStale = booleanParam(request.query, 'staleSubmission', true);
    // Where `gds plan` would propose promoting the tables: what each promotion would take there, and whether it
    // is held, answered with the page rather than asked a name at a time. Only for an environment the caller
    // may act in (a promotion's own first check).
    const promotedTo = stringParam(request.query, 'promotedTo');
    const where = { workspaceId: caller.workspaceId, environment };
    const [{ tables: page, next }, left] = await Promise.all([
      environmentTablePage(ctx.db, {
        ...where,
        limit,
        ...(cursor === undefined ? {} : { after: decodeListCursor(cursor) }),
        ...(filter === undefined ? {} : { filter }),
      }),
      // The first page of a narrowed read says how many tables it leaves out.
      filter === undefined || cursor !== undefined ? undefined : heldLeftOut(ctx.db, { ...where, filter }),
    ]);
    const ids = page.map(({ table }) => table.id);
    const [gates, contracts, stale, promotions] = await Promise.all([
      newestGate1s(
        ctx.db,
        page.map(({ table }) => table),
      ),
      findContracts(ctx.db, ids),
      withStale
        ? staleSubmissions(
            ctx.db,
            page.flatMap(({ table }) => (table.state === 'PENDING_REVIEW' ? [table.id] : [])),
          )
        : undefined,
      promotedTo !== undefined && inEnvironmentScope(caller, promotedTo)
        ? promotionTargets(
            ctx.db,
            caller,
            promotedTo,
            page.map(({ table }) => table),
          )
        : undefined,
    ]);
    const tables: Schema<'HeldTable'>[] = [];
    for (const { table, artifactFile } of page) {
      const gate1 = gates.get(table.id);
      const contract = contracts.get(table.id);
      const promotion = promotions?.get(table.id);
      tables.push({
        id: table.id,
        name: table.name,
        mode: table.mode,
        state: table.state,
        gate: table.gateMode,
        environmentLabel: table.environmentLabel,
        source: table.source,
        connectorId: table.connectorId,
        artifactFile,
        project: table.project,
        definition: heldDefinitionOf(caller, table),
        gate1: gate1 === undefined ? null : { tableId: table.id, ...gate1 },
        contract:
          contract === undefined
            ? null
            : { contract: liveOf(contract, table.state), maySetIntent: maySetIntent(caller, table) },
        contractVersion: table.contractVersion,
        ...(stale !== undefined && table.state === 'PENDING_REVIEW'
          ? { staleSubmission: stale.has(table.id) }
          : {}),
        ...(promotion === undefined ? {} : { promotion }),
      });
    }
    return {
      tables,
      nextCursor: next === null ? null : encodeListCursor(next),
      ...(left === undefined ? {} : { left }),
    };
  });
}
