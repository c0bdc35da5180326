// The set-up every refresh-kill test file shares (test/e2e/refresh-kill-harness.ts: the test server behind a
// proxy that holds chosen refreshes, and the template of a saved integration profile): started before the file's
// tests, closed after them.
import { afterAll, beforeAll } from 'vitest';
import type { KillHarness } from '../e2e/refresh-kill-harness.js';
import { savedProfileTemplate, startKillHarness } from '../e2e/refresh-kill-harness.js';

export interface UsedKillHarness {
  readonly harness: KillHarness;
  /** The profile `ci` as `gds tokens issue --save-profile ci` stores it (savedProfileTemplate). */
  readonly template: Record<string, unknown>;
}

/**
 * Starts the harness in a beforeAll of the calling file, with the template profile issued unless
 * `template: false`, and closes it in an afterAll. Call it at the top of the file; read the fields in tests.
 */
export function useKillHarness(options: { template?: boolean } = {}): UsedKillHarness {
  let harness: KillHarness | undefined;
  let template: Record<string, unknown> | undefined;
  beforeAll(async () => {
    harness = await startKillHarness();
    if (options.template !== false) template = await savedProfileTemplate(harness);
  });
  afterAll(async () => {
    await harness?.close();
  });
  return {
    get harness() {
      if (harness === undefined) throw new Error('useKillHarness: read before its beforeAll ran');
      return harness;
    },
    get template() {
      if (template === undefined)
        throw new Error('useKillHarness: no template (template: false, or read too early)');
      return template;
    },
  };
}
