// The files `npm run build:binaries` writes beside SHA256SUMS for people and package managers: a CycloneDX
// SBOM per asset, a Homebrew formula, a Scoop manifest, a winget manifest, the release notes (the version's
// section of CHANGELOG.md) and install.sh. Everything here is a pure function of what it is given (names, digests,
// the lock file), so two builds of one commit write the same files.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ReleaseAsset {
  /** File name in the release, e.g. gds-0.1.0-linux-x64.tar.gz. */
  file: string;
  sha256: string;
}

export interface Component {
  /** CycloneDX's component type; default: library. */
  type?: 'library' | 'platform';
  name: string;
  version: string;
  license?: string | undefined;
  purl: string;
}

export interface ReleaseInfo {
  name: string;
  version: string;
  description: string;
  license: string;
  /** Where the release's files are downloaded from (no trailing slash). */
  baseUrl: string;
  homepage: string;
}

/** The production packages package-lock.json pins (what the npm package installs and the executables bundle). */
export function lockComponents(root: string): Component[] {
  const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string; license?: string; dev?: boolean; link?: boolean }>;
  };
  const seen = new Set<string>();
  const components: Component[] = [];
  for (const [key, entry] of Object.entries(lock.packages)) {
    if (key === '' || entry.dev === true || entry.link === true || entry.version === undefined) continue;
    const name = key.slice(key.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const id = `${name}@${entry.version}`;
    if (seen.has(id)) continue;
    seen.add(id);
    components.push({
      name,
      version: entry.version,
      license: entry.license,
      purl: `pkg:npm/${name.startsWith('@') ? `%40${name.slice(1)}` : name}@${entry.version}`,
    });
  }
  return components.sort((a, b) => (a.name === b.name ? 0 : a.name < b.name ? -1 : 1));
}

/** A UUID made from a digest: the same asset gives the same serial number, another asset another. */
function uuidFrom(hex: string): string {
  const h = createHash('sha256').update(hex).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h.slice(16, 18), 16) & 0x3f) | 0x80).toString(16)}${h.slice(18, 20)}-${h.slice(20, 32)}`;
}

/** A CycloneDX 1.5 SBOM of one asset: gds itself (with the asset's digest), then what it contains. */
export function cycloneDx(info: ReleaseInfo, asset: ReleaseAsset, components: Component[]): string {
  const bom = {
    bomFormat: 'CycloneDX',
    specVersion: '1.5',
    serialNumber: `urn:uuid:${uuidFrom(asset.sha256)}`,
    version: 1,
    metadata: {
      component: {
        type: 'application',
        'bom-ref': `${info.name}@${info.version}`,
        name: info.name,
        version: info.version,
        description: info.description,
        licenses: [{ license: { id: info.license } }],
        purl: `pkg:generic/${info.name}@${info.version}?download_url=${encodeURIComponent(`${info.baseUrl}/${asset.file}`)}`,
        hashes: [{ alg: 'SHA-256', content: asset.sha256 }],
        properties: [{ name: 'gds:asset', value: asset.file }],
      },
    },
    components: components.map((c) => ({
      type: c.type ?? 'library',
      'bom-ref': c.purl,
      name: c.name,
      version: c.version,
      ...(c.license === undefined ? {} : { licenses: [licenseChoice(c.license)] }),
      purl: c.purl,
    })),
    dependencies: [{ ref: `${info.name}@${info.version}`, dependsOn: components.map((c) => c.purl) }],
  };
  return `${JSON.stringify(bom, null, 2)}\n`;
}

/** A declared license as CycloneDX takes it: an SPDX id, else an expression such as `(MIT OR CC0-1.0)`. */
function licenseChoice(license: string): { license: { id: string } } | { expression: string } {
  return /^[A-Za-z0-9.+-]+$/.test(license) ? { license: { id: license } } : { expression: license };
}

export interface PlatformAssets {
  darwinArm64: ReleaseAsset;
  darwinX64: ReleaseAsset;
  linuxArm64: ReleaseAsset;
  linuxX64: ReleaseAsset;
  winX64: ReleaseAsset;
}

/** The Homebrew formula (gds.rb), macOS and Linux, with the completions each archive carries. */
export function homebrewFormula(info: ReleaseInfo, assets: PlatformAssets): string {
  const block = (asset: ReleaseAsset) =>
    [`      url "${info.baseUrl}/${asset.file}"`, `      sha256 "${asset.sha256}"`].join('\n');
  return `${[
    'class Gds < Formula',
    `  desc "${info.description.replaceAll('"', '\\"')}"`,
    `  homepage "${info.homepage}"`,
    `  version "${info.version}"`,
    `  license "${info.license}"`,
    '',
    '  on_macos do',
    '    on_arm do',
    block(assets.darwinArm64),
    '    end',
    '    on_intel do',
    block(assets.darwinX64),
    '    end',
    '  end',
    '',
    '  on_linux do',
    '    on_arm do',
    block(assets.linuxArm64),
    '    end',
    '    on_intel do',
    block(assets.linuxX64),
    '    end',
    '  end',
    '',
    '  def install',
    '    bin.install "gds"',
    '    bash_completion.install "completions/gds.bash" => "gds"',
    '    zsh_completion.install "completions/_gds"',
    '    fish_completion.install "completions/gds.fish"',
    '  end',
    '',
    '  test do',
    '    assert_match version.to_s, shell_output("#{bin}/gds --version")',
    '  end',
    'end',
  ].join('\n')}\n`;
}

/** The Scoop manifest (gds.json) of the Windows zip. */
export function scoopManifest(info: ReleaseInfo, zip: ReleaseAsset): string {
  const folder = zip.file.replace(/\.zip$/, '');
  const manifest = {
    version: info.version,
    description: info.description,
    homepage: info.homepage,
    license: info.license,
    architecture: { '64bit': { url: `${info.baseUrl}/${zip.file}`, hash: zip.sha256, extract_dir: folder } },
    bin: 'gds.exe',
    checkver: { url: `${info.baseUrl}/SHA256SUMS`, regex: `${info.name}-([\\d.]+)-win-x64\\.zip` },
  };
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

/** The winget manifest (one singleton file) of the Windows zip: a portable gds.exe inside it. */
export function wingetManifest(info: ReleaseInfo, zip: ReleaseAsset): string {
  const folder = zip.file.replace(/\.zip$/, '');
  return `${[
    '# yaml-language-server: $schema=https://aka.ms/winget-manifest.singleton.1.6.0.schema.json',
    `PackageIdentifier: Gds.Gds`,
    `PackageVersion: ${info.version}`,
    'PackageLocale: en-US',
    'Publisher: gds developers',
    'PackageName: gds',
    `License: ${info.license}`,
    `ShortDescription: ${info.description}`,
    'Commands:',
    '  - gds',
    'Installers:',
    '  - Architecture: x64',
    '    InstallerType: zip',
    '    NestedInstallerType: portable',
    '    NestedInstallerFiles:',
    `      - RelativeFilePath: ${folder}\\gds.exe`,
    '        PortableCommandAlias: gds',
    `    InstallerUrl: ${info.baseUrl}/${zip.file}`,
    `    InstallerSha256: ${zip.sha256.toUpperCase()}`,
    'ManifestType: singleton',
    'ManifestVersion: 1.6.0',
  ].join('\n')}\n`;
}

/** The section of CHANGELOG.md for `version` (its `## [version]` heading up to the next `## `). */
/**
 * latest.json: what gds's update notice reads (src/cli/update-notice.ts) at the address package.json's
 * `gds.updateUrl` names. Published there with each release, it says which version is the newest and where it is.
 */
export function latestJson(info: ReleaseInfo): string {
  return `${JSON.stringify({ version: info.version, url: info.baseUrl }, null, 2)}\n`;
}

export function releaseNotes(changelog: string, version: string): string {
  const heading = new RegExp(`^## \\[${version.replaceAll('.', '\\.')}\\][^\\n]*\\n`, 'm');
  const start = heading.exec(changelog);
  if (start === null)
    throw new Error(`CHANGELOG.md has no "## [${version}]" section: write it before a release`);
  const rest = changelog.slice(start.index + start[0].length);
  const end = rest.search(/^## /m);
  const body = (end < 0 ? rest : rest.slice(0, end)).trim();
  return `# ${start[0].slice(3).trim()}\n\n${body}\n`;
}

/**
 * The version's section of CHANGELOG.md as a Debian changelog (what a native package's changelog.gz must be):
 * each paragraph and bullet an entry, headings dropped, dated `date` (RFC 2822).
 */
export function debianChangelog(changelog: string, version: string, maintainer: string, date: Date): string {
  const notes = releaseNotes(changelog, version).split('\n').slice(1).join('\n');
  const entries = notes
    .split(/\n(?=- )|\n\n/)
    .map((block) =>
      block
        .replace(/^- /, '')
        .replace(/\s*\n\s*/g, ' ')
        .trim(),
    )
    .filter((entry) => entry !== '' && !entry.startsWith('#'));
  const wrapped = entries.map((entry) => {
    const lines: string[] = [];
    let line = '';
    for (const word of entry.split(' ')) {
      if (line !== '' && line.length + 1 + word.length > 74) {
        lines.push(line);
        line = word;
      } else line = line === '' ? word : `${line} ${word}`;
    }
    lines.push(line);
    return lines.map((text, i) => `${i === 0 ? '  * ' : '    '}${text}`).join('\n');
  });
  const stamp = date.toUTCString().replace('GMT', '+0000');
  return `gds (${version}) unstable; urgency=medium\n\n${wrapped.join('\n')}\n\n -- ${maintainer}  ${stamp}\n`;
}
