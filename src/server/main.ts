// `npm run server -- [options]` (`--help` lists them): the reference server (serve.ts). package.json runs it
// as `node --liftoff-only --import tsx`: the flag keeps V8 from recompiling PGlite's WebAssembly with its
// optimizing tier, which alone cost 500 MB at start-up (see db/pglite.ts).
// First: on Linux it starts the process again with glibc's malloc settings (malloc-env.ts). The server is
// imported only after that: a module's static imports are all loaded and compiled before any of them runs,
// so the process started again had already loaded the whole server once for nothing (0.5 s of CPU).
import './malloc-env.js';

// eslint-disable-next-line no-restricted-syntax -- loading it before the re-exec is what this avoids
await import('./serve.js');
