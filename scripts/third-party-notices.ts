// `npm run notices`: THIRD-PARTY-NOTICES, the licenses of everything gds redistributes. The npm package
// installs its dependencies from the registry, each with its own license; the single executables and the
// .deb carry them bundled, and Node.js itself. So the file lists every production dependency the lock file
// pins (name, version, the license it declares and its license text as it ships it), then Node.js's own
// LICENSE (which holds the licenses of what Node bundles: V8, ICU, OpenSSL, libuv…).
//
// The file is checked in, and test/docs/notices.test.ts fails when a dependency changed without it being
// written again. Packages of other platforms (the keychain addon's per-platform builds, which the executables
// embed) are not installed here: they are listed with the license they declare and the text of the package
// they build (@napi-rs/keyring's).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(import.meta.url), '../..');

interface LockEntry {
  version?: string;
  license?: string;
  dev?: boolean;
  optional?: boolean;
  link?: boolean;
}

const LICENSE_FILE = /^(?:licen[cs]e|copying|notice)(?:[.-].*)?$/i;

/** The license texts a package ships (LICENSE, LICENCE.md, COPYING, NOTICE…), in name order. */
function licenseTexts(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => LICENSE_FILE.test(name))
    .sort()
    .map((name) => readFileSync(join(dir, name), 'utf8').replace(/\r\n/g, '\n').trim());
}

/** The package name of a lock file key (`node_modules/a/node_modules/@s/b` → `@s/b`). */
function packageName(key: string): string {
  return key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
}

/** The Node.js package whose binary `npm run build:binary` embeds (the `node` devDependency's). */
function nodeRuntime(): { version: string; license: string } {
  const dir = join(root, 'node_modules/node/node_modules');
  const platform = readdirSync(dir).find((name) => /^node-(?:bin-)?(?:linux|darwin|win)-/.test(name));
  if (platform === undefined) throw new Error('node_modules/node holds no platform package: run npm ci');
  const pjson = JSON.parse(readFileSync(join(dir, platform, 'package.json'), 'utf8')) as { version: string };
  const [license] = licenseTexts(join(dir, platform));
  if (license === undefined) throw new Error(`${platform} ships no LICENSE`);
  return { version: pjson.version, license };
}

export function thirdPartyNotices(): string {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, LockEntry>;
  };
  const seen = new Set<string>();
  const blocks: string[] = [];
  const entries = Object.entries(lock.packages)
    .filter(([key, entry]) => key !== '' && entry.dev !== true && entry.link !== true)
    .map(([key, entry]) => ({ key, name: packageName(key), entry }))
    .sort((a, b) => (a.name === b.name ? a.key.localeCompare(b.key) : a.name < b.name ? -1 : 1));
  for (const { key, name, entry } of entries) {
    const id = `${name}@${entry.version ?? '?'}`;
    if (seen.has(id)) continue;
    seen.add(id);
    let texts = licenseTexts(join(root, key));
    let note = '';
    if (texts.length === 0 && !existsSync(join(root, key)) && name.startsWith('@napi-rs/keyring-')) {
      texts = licenseTexts(join(root, 'node_modules/@napi-rs/keyring'));
      note = ' (a platform build of @napi-rs/keyring; its license text)';
    }
    const heading = `${id} — ${entry.license ?? 'license not declared'}${note}`;
    blocks.push(
      texts.length === 0
        ? `${heading}\n\nThe package ships no license file; it declares ${entry.license ?? 'no license'} in its package.json.`
        : `${heading}\n\n${texts.join('\n\n')}`,
    );
  }
  const node = nodeRuntime();
  const rule = '-'.repeat(78);
  return [
    'Third-party notices for gds',
    '',
    'gds itself is under the MIT License (LICENSE). The npm package installs, and the single executables and',
    'the Debian packages contain, the software below, each under its own license. Written by `npm run notices`',
    'from package-lock.json and the installed packages.',
    '',
    `${blocks.length} packages, then Node.js ${node.version}, which every single executable embeds.`,
    '',
    ...blocks.flatMap((block) => [rule, block, '']),
    rule,
    `Node.js ${node.version} (the runtime inside each single executable) — MIT, with the licenses of what it bundles`,
    '',
    node.license,
    '',
  ].join('\n');
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await writeFile(join(root, 'THIRD-PARTY-NOTICES'), thirdPartyNotices());
  process.stderr.write('notices: wrote THIRD-PARTY-NOTICES\n');
}
