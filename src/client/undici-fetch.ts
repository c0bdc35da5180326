// The process entry (cli/main.ts) makes undici 7's own fetch the global `fetch`, the one openid-client calls
// when signing in (the transport is on node:http), as undici's `install()` does for it. Node 24's built-in
// fetch is undici 7 as well, but on its first call Node evaluates all of undici at once (WebSocket, cache,
// HTTP/2 and the rest): measured here, +25 ms and +17 MiB. The fetch module alone loads a third of it, and
// in the single executable it is in the bundle's code cache.
// Only the entry installs it: in-process tests keep Node's fetch, which msw patches.
export function installUndiciFetch(): void {
  globalThis.fetch = async function fetch(input, init) {
    const undici = await import('undici/lib/web/fetch/index.js');
    return undici.fetch(input, init);
  };
}
