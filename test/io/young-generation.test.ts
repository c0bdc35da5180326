import { describe, expect, it } from 'vitest';
import { collectGarbage } from '../../src/io/young-generation.js';

describe('collectGarbage', () => {
  it('collects what nothing holds any more, at once', async () => {
    const ref = (() => new WeakRef({ rows: Array.from({ length: 1_000 }, (_, i) => ({ i })) }))();
    // A WeakRef's target is kept until the job that made it ends.
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    expect(ref.deref()).toBeUndefined();
  });
});
