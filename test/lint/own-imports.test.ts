// gds's own modules are imported statically (docs/architecture.md); eslint refuses a new `import()` of one.
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const eslint = new ESLint({ cwd: root });

/** The messages of eslint's no-restricted-syntax for `text` as the file `file` of the repository. */
async function refusals(file: string, text: string): Promise<string[]> {
  const [result] = await eslint.lintText(text, { filePath: path.join(root, file) });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-syntax').map((m) => m.message);
}

describe('eslint on dynamic imports', () => {
  it("refuses an import() of gds's own module, in any layer", { timeout: 300_000 }, async () => {
    for (const file of ['src/services/planted.ts', 'src/core/planted.ts', 'src/cli/planted.ts']) {
      const messages = await refusals(file, "export const load = () => import('./errors.js');\n");
      expect(messages, file).toEqual([expect.stringContaining("Import gds's own modules statically")]);
    }
  });

  it('refuses an import() whose module is computed', { timeout: 300_000 }, async () => {
    const messages = await refusals(
      'src/services/planted.ts',
      'export const load = (name: string) => import(`./${name}.js`);\n',
    );
    expect(messages).toEqual([expect.stringContaining('with a string literal')]);
  });

  it(
    'lets a library be loaded on first use, and the command table load each command',
    { timeout: 300_000 },
    async () => {
      expect(await refusals('src/core/planted.ts', "export const load = () => import('yaml');\n")).toEqual(
        [],
      );
      expect(
        await refusals(
          'src/commands/loaders.ts',
          "export const COMMAND_LOADERS = { a: () => import('./a.js') };\n",
        ),
      ).toEqual([]);
    },
  );
});
