// Types for undici modules gds loads alone, without the rest of undici.

// undici's fetch without the rest of undici (see src/client/undici-fetch.ts).
declare module 'undici/lib/web/fetch/index.js' {
  export const fetch: typeof globalThis.fetch;
}
