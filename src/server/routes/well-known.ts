// Public, unauthenticated documents under /.well-known.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';

export function wellKnownRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get('/.well-known/jwks.json', async () => ctx.keys.jwks);
}
