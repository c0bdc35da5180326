// The process that talks to the OS keychain for gds: one operation, read as JSON from stdin, answered as
// JSON on stdout. The keychain addon (@napi-rs/keyring) blocks the thread that calls it while D-Bus does
// not answer (a hung session bus held gds 20-45 s, deaf to Ctrl-C, and a worker thread stuck there cannot
// be terminated, nor can the process then exit), so gds runs it here, in a process it can kill at its
// timeout. Started by secret-store.ts: `node keychain-child.js` next to this file, or the single executable
// with KEYCHAIN_CHILD_ARG. Self-contained on purpose (no relative import): Node runs the .ts file as is in
// development and tests. The secret travels on stdin, never in argv or the environment.

export const KEYCHAIN_CHILD_ARG = '__gds_keychain_child';

interface KeychainRequest {
  op: 'get' | 'set' | 'delete' | 'find';
  service: string;
  account: string;
  password?: string;
}

type KeychainAnswer = { ok: true; value: string | boolean | string[] | null } | { ok: false; error: string };

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function answer(request: KeychainRequest): Promise<KeychainAnswer> {
  try {
    const { AsyncEntry, findCredentialsAsync } = await import('@napi-rs/keyring');
    // The accounts only: the passwords the search also returns never leave this process.
    if (request.op === 'find')
      return { ok: true, value: (await findCredentialsAsync(request.service)).map((found) => found.account) };
    // Pinned to the Secret Service on Linux: the default silently falls back to the kernel keyring.
    const entry = new AsyncEntry(request.service, request.account, { linux: { store: 'secret-service' } });
    if (request.op === 'get') return { ok: true, value: (await entry.getPassword()) ?? null };
    if (request.op === 'set') {
      await entry.setPassword(request.password ?? '');
      return { ok: true, value: true };
    }
    return { ok: true, value: await entry.deleteCredential() };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

/** Reads one request from stdin, performs it, writes the answer to stdout and exits. */
export async function runKeychainChild(): Promise<void> {
  let result: KeychainAnswer;
  try {
    result = await answer(JSON.parse(await readStdin()) as KeychainRequest);
  } catch (error) {
    result = { ok: false, error: `bad request: ${(error as Error).message}` };
  }
  process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
}

// Run as a script (`node keychain-child.js`): do the one operation. Imported (the single executable's
// entry), it waits to be called.
const script = process.argv[1];
if (typeof script === 'string' && /keychain-child\.(js|ts)$/.test(script)) void runKeychainChild();
