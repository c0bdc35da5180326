// The single executable's boot script masks a token given as an argument before anything else: in the bundle
// esbuild makes of scripts/sea/boot.ts (as build-binary.ts does), the masking call comes before any module is
// required or any other module's code runs. (bin/run.js's order is checked in a process, secrets-hidden.test.ts.)
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../cli/helpers/cli-process.js';

describe('scripts/sea/boot.ts', () => {
  it('masks the command line before it requires anything or runs another module', async () => {
    const result = await build({
      entryPoints: [join(repoRoot, 'scripts/sea/boot.ts')],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      write: false,
      logLevel: 'silent',
      define: { GDS_BUILD_ID: '"test"', GDS_COMMAND_BUNDLES: '{}' },
    });
    const code = result.outputFiles[0]?.text ?? '';
    const call = code.indexOf('\nscrubProcessTitle();\n');
    expect(call).toBeGreaterThan(0);
    const before = code.slice(0, call);
    expect(before).not.toMatch(/require\(/);
    const modules = [...before.matchAll(/^\/\/ (\S+\.ts)$/gm)].map((m) => m[1]);
    expect(modules).toEqual(['src/core/redact.ts', 'src/cli/process-title.ts', 'scripts/sea/mask-argv.ts']);
  });
});
