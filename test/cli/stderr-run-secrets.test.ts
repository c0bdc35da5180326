// stderr masks every secret of the run, not only those of the command line: a profile's token, which no flag
// or variable holds, is a secret of the run once the transport sent it (addRunSecret), and a debug line or a
// warning that then says it (the service's words quoted back, a keychain note) shows its mask on stderr.
import { http, HttpResponse } from 'msw';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { debugLog } from '../../src/auth/debug-log.js';
import { redactStandardError, secretsFrom } from '../../src/cli/secrets.js';
import { Output } from '../../src/cli/output.js';
import { createTransport, staticToken, uncheckedPath } from '../../src/client/transport.js';
import { startRunSecrets } from '../../src/core/redact.js';
import { BASE, useMockApi } from '../client/mock-api.js';
import { CapturedStream } from '../helpers/captured-output.js';

const api = useMockApi();
/** An opaque token (none of the patterns of core/redact.ts knows it): only the run's own secrets mask it. */
const PROFILE_TOKEN = 'opaqueProfileTokenQwzrtyXvbnm73';

const nodeStderr = Object.getOwnPropertyDescriptor(process, 'stderr')!;
afterEach(() => {
  Object.defineProperty(process, 'stderr', nodeStderr);
  startRunSecrets([]);
  vi.unstubAllEnvs();
});

describe("stderr of a run that sent a profile's token", () => {
  it('masks the token in a GDS_DEBUG line and in a warning, as the error messages do', async () => {
    const stderr = new CapturedStream(false);
    Object.defineProperty(process, 'stderr', { configurable: true, enumerable: true, get: () => stderr });
    vi.stubEnv('GDS_DEBUG', '1');
    // What main() does first: the secrets of the command line (none here), then stderr's mask.
    const argv = ['api', '/api/me'];
    startRunSecrets(secretsFrom(argv, {}));
    redactStandardError(argv);

    api.use(http.get(`${BASE}/api/me`, () => HttpResponse.json({ note: `hello ${PROFILE_TOKEN}` })));
    const transport = createTransport({ baseUrl: BASE, version: '1.2.3', auth: staticToken(PROFILE_TOKEN) });
    try {
      const me = await transport.send<{ note: string }>({ method: 'GET', path: uncheckedPath('/api/me') });
      debugLog(`keychain read: ${PROFILE_TOKEN}`);
      new Output({ json: false, stdout: new CapturedStream(false), env: { NO_COLOR: '1' } }).warn(me.note);
    } finally {
      await transport.close();
    }

    expect(stderr.text).toContain('gds: → GET');
    expect(stderr.text).toContain('gds: keychain read: ****');
    expect(stderr.text).toContain('Warning: hello ****');
    expect(stderr.text).not.toContain(PROFILE_TOKEN.slice(0, 8));
  });
});
