// Every route of the certification side, registered by one line in app.ts.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { certifyRoutes } from '../routes/certify.js';
import { configRoutes } from '../routes/config.js';
import { contractRoutes } from '../routes/contract.js';
import { promotionRoutes } from '../routes/promotions.js';
import { versionRoutes } from '../routes/versions.js';

export function certificationRoutes(app: FastifyInstance, ctx: AppContext): void {
  certifyRoutes(app, ctx);
  versionRoutes(app, ctx);
  configRoutes(app, ctx);
  contractRoutes(app, ctx);
  promotionRoutes(app, ctx);
}
