// Listing, creating and revoking tokens: integration tokens (an OWNER or ADMIN sees and revokes the
// workspace's, anyone the ones they issued) and CLI tokens (a person creates, lists and revokes their own; an
// OWNER or ADMIN anyone's); `POST /api/auth/revoke` revokes the calling credential.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { SessionCaller } from '../auth/caller.js';
import { requireSession } from '../auth/caller.js';
import {
  cliTokenNotFound,
  listCliTokens,
  listIntegrationTokens,
  revokeCliToken,
  revokeIntegrationToken,
  revokeOwnCredential,
} from '../auth/revocation.js';
import { requireRole } from '../certification/access.js';
import type { AppContext } from '../context.js';
import { callerOf, guardBeforeBody } from '../context.js';
import { badRequest, unauthorized } from '../errors.js';
import { createCliToken } from '../auth/cli-tokens.js';
import { roleAtLeast } from '../../core/scopes.js';
import type { Schema } from '../../contract/types.js';
import { parseBody } from '../contract.js';
import { rateLimited } from '../rate-limit.js';
import { checkInput } from '../input-rule.js';
import type { Query } from '../query.js';
import { rejectUnknownParams, stringParam } from '../query.js';

type CreateCliTokenRequest = Schema<'CreateCliTokenRequest'>;
type CreatedCliToken = Schema<'CreatedCliToken'>;

export function revocationRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/api/integration/tokens', async (request: FastifyRequest<{ Querystring: Query }>) => {
    const caller = requireSession(await callerOf(ctx, request));
    rejectUnknownParams(request.query, ['userId']);
    return {
      tokens: await listIntegrationTokens(ctx.db, caller, { userId: stringParam(request.query, 'userId') }),
    };
  });

  app.post('/api/integration/tokens/revoke', guardBeforeBody(requireSession), async (request) => {
    const caller = requireSession(await callerOf(ctx, request));
    const body = request.body as { token?: unknown } | null;
    if (typeof body !== 'object' || body === null || typeof body.token !== 'string' || body.token === '') {
      throw badRequest('invalid_body', 'Send {"token": "<tf_… client token or token id>"}.', {
        field: 'token',
      });
    }
    checkInput(body, 'body');
    return { token: await revokeIntegrationToken(ctx, caller, body.token) };
  });

  app.post('/api/cli-tokens', guardBeforeBody(requireSession), async (request, reply) => {
    const caller = requireSession(await callerOf(ctx, request));
    if (caller.via === 'cli_token') {
      throw unauthorized(
        'interactive_login_required',
        'Creating a CLI token needs a browser sign-in, not a CLI token (one CLI token does not make another): run `gds auth login` and try again.',
      );
    }
    const mint = await ctx.mints.take(`user:${caller.workspaceId}:${caller.userId}`);
    if (!mint.allowed) throw rateLimited(mint, ctx.clock(), 'tokens created');
    const body = parseBody<CreateCliTokenRequest>('CreateCliTokenRequest', request.body);
    const created = await createCliToken(ctx, {
      workspaceId: caller.workspaceId,
      userId: caller.userId,
      name: body.name,
    });
    const response: CreatedCliToken = {
      id: created.id,
      name: body.name,
      token: created.token,
      userId: caller.userId,
      createdAt: created.createdAt,
    };
    return reply.code(201).header('cache-control', 'no-store').send(response);
  });

  app.get('/api/cli-tokens', async (request: FastifyRequest<{ Querystring: Query }>) => {
    const caller = requireSession(await callerOf(ctx, request));
    rejectUnknownParams(request.query, ['userId']);
    const userId = stringParam(request.query, 'userId') ?? caller.userId;
    if (userId !== caller.userId) requireRole(caller, 'ADMIN', "list another person's CLI tokens");
    return { tokens: await listCliTokens(ctx.db, caller.workspaceId, { userId }) };
  });

  app.post(
    '/api/cli-tokens/:tokenId/revoke',
    guardBeforeBody(requireSession, async (context, caller, tokenId) => {
      const [token] = await listCliTokens(context.db, caller.workspaceId, {
        id: tokenId,
        ...revokedBy(caller),
      });
      if (!token) throw cliTokenNotFound(tokenId);
    }),
    async (request: FastifyRequest<{ Params: { tokenId: string } }>) => {
      const caller = requireSession(await callerOf(ctx, request));
      await revokeCliToken(ctx, caller, request.params.tokenId, revokedBy(caller).userId);
      const [token] = await listCliTokens(ctx.db, caller.workspaceId, { id: request.params.tokenId });
      return { token };
    },
  );

  app.post('/api/auth/revoke', guardBeforeBody(requireSession), async (request, reply) => {
    const caller = requireSession(await callerOf(ctx, request));
    await revokeOwnCredential(ctx, caller);
    return reply.code(204).send();
  });
}

/** Whose CLI tokens `caller` may revoke: its holder their own, an OWNER or ADMIN anyone's (another's is 404). */
function revokedBy(caller: SessionCaller): { userId?: string } {
  return roleAtLeast(caller.role, 'ADMIN') ? {} : { userId: caller.userId };
}
