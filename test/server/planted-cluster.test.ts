// Nothing planted in the shared temp folder is trusted: the cached empty PGlite cluster a fresh
// in-memory server starts from lives in a private folder (0700, the user's own, no symlink) and is
// used only when its SHA-256 matches the one recorded beside it. A planted cluster holding a CLI
// token hash the attacker knows once made that token the new server's OWNER.
import { createHash } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from '../../src/server/app.js';
import { scratchDir, seededPgliteCopy } from '../helpers/migrated-database.js';

const savedTmp = process.env.TMPDIR;
let tmp: string;
let plantedCluster: Buffer;
let plantedOwnerToken: string;
let clusterName: string;

const cacheDir = () => join(tmp, `gds-cache-${process.getuid?.() ?? 0}`);
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** Starts an in-memory server and answers the status of GET /api/me with the planted OWNER token. */
async function plantedTokenStatus(): Promise<number> {
  const server = await createServer({ port: 0, jobs: 'manual', scratchDir: await scratchDir() });
  try {
    const response = await fetch(`${server.url}/api/me`, {
      headers: { authorization: `Bearer ${plantedOwnerToken}` },
    });
    return response.status;
  } finally {
    await server.close();
  }
}

beforeAll(async () => {
  // The attacker's cluster: a seeded server whose OWNER's CLI token they hold (started on a seeded copy, as
  // test servers are: the cluster holds the same schema and seed as one it seeded itself).
  const evilDb = await seededPgliteCopy();
  try {
    const evil = await createServer({ port: 0, jobs: 'manual', dataDir: evilDb.dataDir });
    plantedOwnerToken = evil.ready.users.find((u) => u.role === 'OWNER')?.cliToken ?? '';
    await evil.close();
    const lite = await PGlite.create(evilDb.dataDir);
    plantedCluster = Buffer.from(await (await lite.dumpDataDir('gzip')).arrayBuffer());
    await lite.close();
  } finally {
    await evilDb.remove();
  }
  tmp = await mkdtemp(join(tmpdir(), 'gds-planted-'));
  process.env.TMPDIR = tmp; // os.tmpdir() reads it on every call
  const pkg = new URL('../package.json', import.meta.resolve('@electric-sql/pglite'));
  const { version } = JSON.parse(await readFile(pkg, 'utf8')) as { version: string };
  clusterName = `pglite-${version}-empty-cluster.tar.gz`;
  // Where the server used to look, with no owner check.
  await writeFile(join(tmp, `gds-${clusterName}`), plantedCluster);
});

afterAll(async () => {
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
  if (tmp !== undefined) await rm(tmp, { recursive: true, force: true });
});

describe('a fresh in-memory server trusts no cluster planted in the temp folder', () => {
  it('ignores a cluster planted at the old shared path', async () => {
    expect(plantedOwnerToken).toMatch(/^cli_/);
    expect(await plantedTokenStatus()).toBe(401);
  });

  it('ignores a cache folder open to others, even with a matching digest', async () => {
    await rm(cacheDir(), { recursive: true, force: true });
    await mkdir(cacheDir(), { mode: 0o777 });
    await chmod(cacheDir(), 0o777);
    await writeFile(join(cacheDir(), clusterName), plantedCluster);
    await writeFile(join(cacheDir(), `${clusterName}.sha256`), sha256(plantedCluster));
    expect(await plantedTokenStatus()).toBe(401);
  });

  it('ignores a cache folder that is a symlink to another folder', async () => {
    await rm(cacheDir(), { recursive: true, force: true });
    const elsewhere = join(tmp, 'elsewhere');
    await mkdir(elsewhere, { mode: 0o700 });
    await writeFile(join(elsewhere, clusterName), plantedCluster);
    await writeFile(join(elsewhere, `${clusterName}.sha256`), sha256(plantedCluster));
    await symlink(elsewhere, cacheDir());
    expect(await plantedTokenStatus()).toBe(401);
  });

  it('rebuilds a cluster in its private folder whose digest does not match, and then reuses the rebuilt one', async () => {
    await rm(cacheDir(), { recursive: true, force: true });
    await mkdir(cacheDir(), { mode: 0o700 });
    await writeFile(join(cacheDir(), clusterName), plantedCluster);
    await writeFile(join(cacheDir(), `${clusterName}.sha256`), sha256(Buffer.from('something else')));
    expect(await plantedTokenStatus()).toBe(401);
    const rebuilt = await readFile(join(cacheDir(), clusterName));
    expect(rebuilt.equals(plantedCluster)).toBe(false);
    expect((await readFile(join(cacheDir(), `${clusterName}.sha256`), 'utf8')).trim()).toBe(sha256(rebuilt));
    expect((await stat(join(cacheDir(), clusterName))).mode & 0o777).toBe(0o600);
    const before = (await stat(join(cacheDir(), clusterName))).mtimeMs;
    expect(await plantedTokenStatus()).toBe(401);
    expect((await stat(join(cacheDir(), clusterName))).mtimeMs).toBe(before);
  });
});
