// The service over https with a certificate from an authority the machine does not trust (a company CA,
// here a self-signed one from fixtures/tls): gds says what is wrong with the certificate and how to trust
// it, without advising a node flag the single executable cannot take; with NODE_EXTRA_CA_CERTS it works.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli } from '../cli/helpers/cli-process.js';

const fixtures = fileURLToPath(new URL('./fixtures/tls/', import.meta.url));
const certificate = join(fixtures, 'cert.pem');
const token = 'cli_tls0123456789secret';
const table = {
  id: 'tbl_1',
  name: 'orders',
  mode: 'MODE_A',
  state: 'CERTIFIED',
  gate: 'ENFORCING',
  environmentLabel: 'dev',
};
let server: Server;
let base: string;
const authorizations: Array<string | undefined> = [];

beforeAll(async () => {
  server = createServer(
    { key: readFileSync(join(fixtures, 'key.pem')), cert: readFileSync(certificate) },
    (req, res) => {
      authorizations.push(req.headers.authorization);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ tables: [table] }));
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await ensureBuilt();
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const env = (extra: Record<string, string> = {}) => ({
  SERVICE_TOKEN: token,
  SERVICE_API_URL: base,
  ...extra,
});

describe('https to a service whose certificate authority is not trusted', () => {
  it('--json: exit 9, one error line naming the certificate problem, no token sent', async () => {
    const r = await runCli(['list', '--json'], { env: env() });
    expect(r.code).toBe(9);
    expect(r.stdout).toBe('');
    const { error } = JSON.parse(r.stderr) as { error: { code: string; message: string; details: unknown } };
    expect(error.code).toBe('unreachable');
    expect(error.message).toContain("the service's TLS certificate is not signed by an authority gds trusts");
    expect(error.message).not.toContain('--use-system-ca');
    expect(error.details).toEqual({ url: base, cause: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
    expect(authorizations).toEqual([]);
  });

  it('for people: says how to trust the authority, after one attempt (a retry meets the same certificate)', async () => {
    const r = await runCli(['list'], { env: env({ GDS_DEBUG: '1' }) });
    expect(r.code).toBe(9);
    expect(r.stderr).toContain('NODE_EXTRA_CA_CERTS=/path/to/ca.pem');
    expect(r.stderr.match(/^gds: ✗ GET /gm)).toHaveLength(1);
    expect(r.stderr).not.toContain('retry');
    expect(r.stderr).not.toContain(token.slice(4));
  });

  it('with NODE_EXTRA_CA_CERTS naming the authority, the same call succeeds', async () => {
    const r = await runCli(['list', '--json'], { env: env({ NODE_EXTRA_CA_CERTS: certificate }) });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(table);
    expect(authorizations).toEqual([`Bearer ${token}`]);
  });
});
