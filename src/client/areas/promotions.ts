// Environment promotion and portable bundles (`gds env promote`).
import type { Schema } from '../../contract/types.js';
import { pathOf, writeOptions } from '../transport.js';
import type { CallOptions, Transport, WriteOptions } from '../transport.js';

export type PromotionResult = Schema<'PromotionResult'>;
export type Bundle = Schema<'Bundle'>;
export type PromotionPreview = Schema<'PromotionPreview'>;
/** `replaceId` names the table already in the target environment; `dryRun` answers a preview. */
export type LandingOptions = Pick<Schema<'PromotionRequest'>, 'replaceId' | 'dryRun'>;

export interface PromotionsApi {
  /**
   * Registers the table's artifact on `to`'s connector (the first active one unless `connectorId`).
   * `ifMatch` (with `replaceId`): the replaced table's definition version, read before.
   */
  promote(
    tableId: string,
    request: Schema<'PromotionRequest'>,
    options?: WriteOptions,
  ): Promise<PromotionResult | PromotionPreview>;
  /** The portable bundle, sealed with a sha256 over its canonical JSON. */
  exportBundle(tableId: string, options?: CallOptions): Promise<Bundle>;
  /** 400 when the bundle does not match its sha256. `ifMatch` as for promote. */
  importBundle(
    bundle: Bundle,
    connectorId: string,
    options?: WriteOptions,
    landing?: LandingOptions,
  ): Promise<PromotionResult | PromotionPreview>;
}

export function promotionsApi(transport: Transport): PromotionsApi {
  return {
    async promote(tableId, request, options) {
      return transport.send<PromotionResult | PromotionPreview>({
        method: 'POST',
        path: pathOf('/api/tables/{tableId}/promotions', { tableId }),
        body: request,
        ...writeOptions(options),
      });
    },
    async exportBundle(tableId, options) {
      return transport.send<Bundle>({
        method: 'GET',
        path: pathOf('/api/tables/{tableId}/bundle', { tableId }),
        ...options,
      });
    },
    async importBundle(bundle, connectorId, options, landing = {}) {
      return transport.send<PromotionResult | PromotionPreview>({
        method: 'POST',
        path: '/api/bundles',
        body: { ...bundle, connectorId, ...landing },
        ...writeOptions(options),
      });
    },
  };
}
