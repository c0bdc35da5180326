// A service of a long host name (three long labels: 150 characters and more, up to the 253 of the longest DNS
// name) that cannot be reached through the proxy: the note names the host whole, as the user must write it in
// NO_PROXY. It was cut at 80, then at 200.
import { describe, expect, it } from 'vitest';
import { closedPort } from '../helpers/closed-port.js';
import { runInProcess } from '../helpers/run-in-process.js';

describe('a proxy that refuses the way to a service of a long host', () => {
  const longest = `${['a', 'b', 'c'].map((c) => c.repeat(63)).join('.')}.${'d'.repeat(57)}.com`;
  expect(longest).toHaveLength(253);
  it.each([
    [
      'three long labels',
      `${'governed-data-service-of-the-finance-department-eu-west.'.repeat(3)}example.com`,
    ],
    ['253 characters, the longest DNS name', longest],
  ])('names the host whole in the note, where NO_PROXY needs it (%s)', async (_kind, host) => {
    expect(host.length).toBeGreaterThan(150);
    const r = await runInProcess(['api', '/api/tables'], {
      env: {
        SERVICE_API_URL: `https://${host}`,
        SERVICE_TOKEN: 'opaqueQwzrtyXvbnmKjhgfdsaPlmnb73',
        HTTPS_PROXY: `http://127.0.0.1:${await closedPort()}`,
        NO_PROXY: '',
      },
    });
    expect(r.code, r.stderr).toBe(9);
    expect(r.stderr).toContain(`lets ${host} through, or leave it out with NO_PROXY=${host}.`);
    expect(r.stderr).toContain(`NO_PROXY lists ${host})`);
  });
});
