// Types for undici modules the client loads alone, without the rest of undici.

// The Agent class alone (fetch, WebSocket, cache… stay unloaded): 23 modules instead of 110.
declare module 'undici/lib/dispatcher/agent.js' {
  import type { Agent } from 'undici';
  const AgentClass: typeof Agent;
  export default AgentClass;
}

// undici's fetch without the rest of undici (see src/client/undici-fetch.ts).
declare module 'undici/lib/web/fetch/index.js' {
  export const fetch: typeof globalThis.fetch;
}
