// Public, unauthenticated documents under /.well-known.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { discoveryDocument, paths } from '../oauth/settings.js';

export function wellKnownRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/.well-known/jwks.json', async () => ctx.keys.jwks);
}

/** OpenID discovery (RFC 8414's metadata) under the REST base URL, the issuer: a client given that URL finds it. */
export function discoveryRoute(rest: FastifyInstance, ctx: AppContext): void {
  rest.get(paths.discovery, async () => discoveryDocument(ctx.issuer(), ctx.publicOrigin()));
}
