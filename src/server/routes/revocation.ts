// Listing and revoking tokens (issue 22 item 7): the workspace's integration tokens and a person's CLI
// tokens, for the workspace's OWNER or ADMINs; `POST /api/auth/revoke` revokes the calling credential.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requireSession } from '../auth/caller.js';
import {
  listCliTokens,
  listIntegrationTokens,
  revokeCliToken,
  revokeIntegrationToken,
  revokeOwnCredential,
} from '../auth/revocation.js';
import { requireRole } from '../certification/access.js';
import type { AppContext } from '../context.js';
import { callerOf } from '../context.js';
import { badRequest } from '../errors.js';
import { checkInput } from '../input-rule.js';
import type { Query } from '../query.js';
import { rejectUnknownParams, stringParam } from '../query.js';

export function revocationRoutes(app: FastifyInstance, ctx: AppContext): void {
  const admin = async (request: FastifyRequest, what: string) => {
    const caller = requireSession(await callerOf(ctx, request));
    requireRole(caller, 'ADMIN', what);
    return caller;
  };

  app.get('/api/integration/tokens', async (request) => {
    const caller = await admin(request, "list the workspace's integration tokens");
    return { tokens: await listIntegrationTokens(ctx, caller) };
  });

  app.post('/api/integration/tokens/revoke', async (request) => {
    const caller = await admin(request, 'revoke an integration token');
    const body = request.body as { token?: unknown } | null;
    if (typeof body !== 'object' || body === null || typeof body.token !== 'string' || body.token === '') {
      throw badRequest('invalid_body', 'Send {"token": "<tf_… client token or token id>"}.', {
        field: 'token',
      });
    }
    checkInput(body, 'body');
    return { token: await revokeIntegrationToken(ctx, caller, body.token) };
  });

  app.get('/api/cli-tokens', async (request: FastifyRequest<{ Querystring: Query }>) => {
    const caller = requireSession(await callerOf(ctx, request));
    rejectUnknownParams(request.query, ['userId']);
    const userId = stringParam(request.query, 'userId') ?? caller.userId;
    if (userId !== caller.userId) requireRole(caller, 'ADMIN', "list another person's CLI tokens");
    return { tokens: await listCliTokens(ctx, caller.workspaceId, userId) };
  });

  app.post(
    '/api/cli-tokens/:tokenId/revoke',
    async (request: FastifyRequest<{ Params: { tokenId: string } }>) => {
      const caller = await admin(request, 'revoke a CLI token');
      await revokeCliToken(ctx, caller, request.params.tokenId);
      const [token] = (await listCliTokens(ctx, caller.workspaceId)).filter(
        (t) => t.id === request.params.tokenId,
      );
      return { token };
    },
  );

  app.post('/api/auth/revoke', async (request, reply) => {
    const caller = requireSession(await callerOf(ctx, request));
    await revokeOwnCredential(ctx, caller);
    return reply.code(204).send();
  });
}
