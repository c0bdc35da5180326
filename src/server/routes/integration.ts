// POST /api/integration/tokens (§4.1), POST /api/integration/refresh (§4.2), and the short-lived tokens a
// person draws on their own sign-in or CLI token (a CI job holding only a CLI token, for a MANAGEMENT step).
import type { FastifyInstance } from 'fastify';
import type { TableGrantRequest } from '../../core/scopes.js';
import { ANY_ENVIRONMENT, envScopeAllows, planMint } from '../../core/scopes.js';
import type { IssuedToken, IssueTokenRequest, RefreshResponse, Schema } from '../../contract/types.js';
import { requireSession } from '../auth/caller.js';
import type { TokenPlan } from '../auth/integration-tokens.js';
import {
  issueIntegrationToken,
  issueShortLivedToken,
  refreshIntegrationToken,
} from '../auth/integration-tokens.js';
import type { SessionCaller } from '../auth/caller.js';
import type { AppContext } from '../context.js';
import { workspaceEnvironments } from '../certification/access.js';
import { rateLimited } from '../rate-limit.js';
import { callerOf, guardBeforeBody, limitFailedAuthentication } from '../context.js';
import { parseBody } from '../contract.js';
import { badRequest, forbidden, HttpError, notFound, unauthorized } from '../errors.js';
import { checkIds } from '../input-rule.js';

type ShortLivedTokenRequest = Schema<'ShortLivedTokenRequest'>;
type ShortLivedToken = Schema<'ShortLivedToken'>;

export function integrationRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.post('/api/integration/tokens', guardBeforeBody(requireSession), async (request, reply) => {
    const caller = requireSession(await callerOf(ctx, request));
    const body = parseBody<IssueTokenRequest>('IssueTokenRequest', request.body);
    const plan = await planToken(ctx, caller, body);
    const issued = await issueIntegrationToken(ctx, {
      workspaceId: caller.workspaceId,
      userId: caller.userId,
      name: body.name,
      ...plan,
    });
    const response: IssuedToken = {
      id: issued.id,
      name: body.name,
      clientToken: issued.clientToken,
      audience: plan.audience,
      env: body.env,
      scopes: plan.scopes,
      tokens: issued.tokens,
    };
    return reply.code(201).send(response);
  });

  app.post('/api/integration/short-lived-tokens', guardBeforeBody(requireSession), async (request, reply) => {
    const caller = requireSession(await callerOf(ctx, request));
    const body = parseBody<ShortLivedTokenRequest>('ShortLivedTokenRequest', request.body);
    const env = body.env ?? (await grantsEnvironment(ctx, caller.workspaceId, body.scopes));
    const plan = await planToken(ctx, caller, { env, scopes: body.scopes });
    const response: ShortLivedToken = await issueShortLivedToken(ctx, caller, plan);
    return reply.code(201).send(response);
  });

  app.post('/api/integration/refresh', async (request) => {
    // A refresh token is a credential: bogus ones count against the address's failed-authentication limit.
    const response: RefreshResponse = await limitFailedAuthentication(ctx, request, async () => {
      const body = parseBody<{ refreshToken: string }>('RefreshRequest', request.body);
      return { tokens: await refreshIntegrationToken(ctx, body.refreshToken) };
    });
    return response;
  });
}

/** The one environment of the tables a request grants, for a short-lived token that names none. */
async function grantsEnvironment(
  ctx: AppContext,
  workspaceId: string,
  scopes: IssueTokenRequest['scopes'],
): Promise<string> {
  const ids = tableGrants(scopes).map((g) => g.tableId);
  if (ids.length === 0)
    throw badRequest(
      'env_required',
      'Name env ("*" or an environment label) for a token of workspace scopes.',
    );
  const rows = await ctx.db.query<{ environment_label: string }>(
    `SELECT DISTINCT environment_label FROM gds.tables WHERE workspace_id = $1 AND id = ANY($2::text[]) AND active`,
    [workspaceId, ids],
  );
  const [only] = rows;
  if (only === undefined) throw notFound('table_not_found', `No table ${ids.join(', ')} in this workspace.`);
  if (rows.length > 1)
    throw badRequest(
      'env_required',
      `The tables are in several environments (${rows.map((r) => r.environment_label).join(', ')}): name env.`,
    );
  return only.environment_label;
}

/** The table grants of `scopes`; a table id too long to be one is 404 `table_not_found`, said back cut. */
function tableGrants(scopes: IssueTokenRequest['scopes']): TableGrantRequest[] {
  const grants = scopes.filter((s): s is TableGrantRequest => typeof s === 'object');
  for (const { tableId } of grants) checkIds({ tableId });
  return grants;
}

/**
 * What a person may mint (§2.2, §5.5, §5.6): the audience, scope strings and table ids of `body`, checked
 * against the caller's role, table ownership and environment scope; counts against their mint limit.
 */
async function planToken(
  ctx: AppContext,
  caller: SessionCaller,
  body: { env: string; scopes: IssueTokenRequest['scopes'] },
): Promise<TokenPlan> {
  // §5.9: certify needs an interactive sign-in. A static CLI token is refused certify itself, so it may not
  // mint or draw the token that certifies either.
  if (caller.via === 'cli_token' && body.scopes.includes('workspace:write:certify'))
    throw unauthorized(
      'interactive_login_required',
      'A token that certifies needs an interactive sign-in, not a static CLI token: run `gds auth login` and try again.',
    );
  // Each token has a rate bucket of its own: minting is limited per person, so tokens cannot buy buckets.
  const mint = await ctx.mints.take(`user:${caller.workspaceId}:${caller.userId}`);
  if (!mint.allowed) throw rateLimited(mint, ctx.clock(), 'integration tokens issued');
  checkEnvironmentScope(caller, body.env, await checkEnvironment(ctx, caller.workspaceId, body.env));
  const grants = tableGrants(body.scopes);
  const tables = await ctx.db.query<{ id: string; slug: string; owner_id: string }>(
    'SELECT id, slug, owner_id FROM gds.tables WHERE workspace_id = $1 AND id = ANY($2::text[]) AND active',
    [caller.workspaceId, grants.map((g) => g.tableId)],
  );
  const plan = planMint(
    caller,
    body.scopes,
    new Map(tables.map((t) => [t.id, { id: t.id, slug: t.slug, ownerId: t.owner_id }])),
  );
  if (!plan.ok) throw new HttpError(plan.status, plan.code, plan.message, plan.details);
  return {
    audience: plan.audience,
    env: body.env,
    scopes: plan.scopes,
    tableIds: plan.audience === 'DATA-API' ? Object.fromEntries(tables.map((t) => [t.slug, t.id])) : {},
  };
}

/**
 * `*` or an environment the workspace has (a connector's or a table's label); returns the workspace's
 * environments.
 */
async function checkEnvironment(ctx: AppContext, workspaceId: string, env: string): Promise<string[]> {
  const known = await workspaceEnvironments(ctx.db, workspaceId);
  if (env !== ANY_ENVIRONMENT && !known.includes(env)) {
    throw badRequest(
      'unknown_environment',
      `env "${env}" is not an environment of this workspace; use "*" (any environment) or one of: ${known.join(', ')}.`,
      { env, known },
    );
  }
  return known;
}

/**
 * A token reaches no further than the person who mints it (§5.6): its environment must be in the
 * caller's scope, and `*` needs every environment of the workspace.
 */
function checkEnvironmentScope(caller: SessionCaller, env: string, workspaceEnvs: string[]): void {
  const needed = env === ANY_ENVIRONMENT ? workspaceEnvs : [env];
  const missing = needed.filter((e) => !envScopeAllows(caller.envScope, e));
  if (missing.length === 0) return;
  throw forbidden(
    'environment_not_in_scope',
    `You cannot mint a token for ${env === ANY_ENVIRONMENT ? 'every environment ("*")' : `environment ${env}`}: your scope is ${caller.envScope.join(', ') || 'empty'}; use one of those environments or ask a workspace admin to widen it.`,
    { env, envScope: caller.envScope, missing },
  );
}
