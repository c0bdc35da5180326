// A secret of the run that holds characters a URL encodes (`+`, `/`, `=`, `#`, a letter outside ASCII), given
// where an id goes: the request's path carries it percent-encoded (`opaque%2BQwzr%2F…`), and the network error,
// its suggestion, `details.request` and GDS_DEBUG's lines said that form back whole. It is the token, in a form
// anyone decodes: masked as the token is.
import { describe, expect, it } from 'vitest';
import { closedPort } from '../helpers/closed-port.js';
import { runInProcess } from '../helpers/run-in-process.js';

/** An opaque token (none of the patterns of core/redact.ts knows it) with characters a URL path encodes. */
const TOKENS = [
  'opaque+Qwzrty/XvbnmKjh=gfdsa==',
  'opaque#Qwzrty?Xvbnm&Kjhgfdsa',
  'öpaqueQwzrtyXvbnmKjhgfdsa',
];

describe('a secret of the run percent-encoded in a URL', () => {
  for (const token of TOKENS) {
    it(`SERVICE_TOKEN ${JSON.stringify(token)} given as a job id: no URL form of it is printed`, async () => {
      const base = `http://127.0.0.1:${await closedPort()}/v1`;
      for (const json of [false, true]) {
        const r = await runInProcess(['gate', 'result', token, ...(json ? ['--json'] : [])], {
          env: { SERVICE_API_URL: base, SERVICE_TOKEN: token, GDS_DEBUG: '1' },
        });
        expect(r.code, r.stderr).toBe(9);
        expect(r.stderr).toContain('/api/gate-jobs/****/result');
        const printed = r.stdout + r.stderr;
        for (const form of [token, encodeURIComponent(token), encodeURI(token)])
          expect(printed, printed).not.toContain(form);
      }
    });
  }
});
