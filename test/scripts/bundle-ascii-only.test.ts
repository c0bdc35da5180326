// The executable reads its bundles as latin1: the build writes what esbuild leaves beyond ASCII (a raw
// character in a regular-expression literal; strings it escapes itself) as escapes that mean the same.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { build } from 'esbuild';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { escapeNonAscii, firstNonAscii, makeBundleAscii } from '../../scripts/bundle/ascii-only.js';
import { scriptOptions } from '../../scripts/bundle/esbuild-plugins.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gds-ascii-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

async function bundled(source: string): Promise<string> {
  const entry = join(dir, 'entry.ts');
  const outfile = join(dir, 'out.cjs');
  await writeFile(entry, source);
  await build({ ...scriptOptions({ minify: true }), entryPoints: [entry], outfile });
  return outfile;
}

/** What the bundle's `module.exports.results` is, its text read as the executable reads it (latin1). */
async function resultsReadAsLatin1(file: string): Promise<unknown> {
  const module = { exports: {} as { results?: unknown } };
  runInNewContext(await readFile(file, 'latin1'), { module, exports: module.exports });
  return module.exports.results;
}

// ansis's strip, as oclif's bundle holds it: a raw ESC and CSI (U+009B) in a class.
const strip =
  'export const results = ["\\u001b[1mok\\u001b[0m", "\\u00c2[1m", "\\u009b1mx"].map((text) => ' +
  'text.replace(/[\u001b\u009b][[()#;?]*(?:[0-9]{1,4}(?:;[0-9]{0,4})*)?[0-9A-ORZcf-nqry=><]/g, ""));\n';

it('keeps a raw character of a regular-expression literal in the bundle, which latin1 reads wrongly', async () => {
  const file = await bundled(strip);
  expect(firstNonAscii(await readFile(file, 'utf8'))?.codePoint).toBe('U+009B');
  expect(await resultsReadAsLatin1(file)).not.toEqual(['ok', '\u00c2[1m', 'x']);
});

it('writes it as an escape, so the bundle read as latin1 matches what the source means', async () => {
  const file = await bundled(strip);
  makeBundleAscii(file);
  const text = await readFile(file, 'utf8');
  expect(firstNonAscii(text)).toBeUndefined();
  expect(text).toContain('\\u009B');
  expect(await resultsReadAsLatin1(file)).toEqual(['ok', '\u00c2[1m', 'x']);
});

it('escapes each UTF-16 unit, with or without the u flag, and leaves an ASCII bundle as it is', async () => {
  const file = await bundled(
    'export const results = [/\u2026+/.test("\u2026\u2026"), /^\u{1F600}$/u.test("\u{1F600}"), ' +
      '/^[\u00e9]$/.test("\u00e9"), "caf\u00e9"];\n',
  );
  makeBundleAscii(file);
  expect(firstNonAscii(await readFile(file, 'utf8'))).toBeUndefined();
  expect(await resultsReadAsLatin1(file)).toEqual([true, true, true, 'caf\u00e9']);
  const before = await readFile(file, 'utf8');
  makeBundleAscii(file);
  expect(await readFile(file, 'utf8')).toBe(before);
});

it('refuses a character right after a backslash, naming its place and the fix', () => {
  expect(() => escapeNonAscii('let a = 1;\nconst r = /\\\u00e9/;', 'out.cjs')).toThrow(
    /out\.cjs:2:13 holds U\+00E9 right after a backslash in `const r = \/\\\u00e9\/;`: .*latin1.*\\u00E9/,
  );
  expect(escapeNonAscii('/\\\\\u00e9/')).toBe('/\\\\\\u00E9/');
});
