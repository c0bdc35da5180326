// The Agent class alone, without the rest of undici (fetch, WebSocket, cache…): 23 modules instead of 110.
declare module 'undici/lib/dispatcher/agent.js' {
  import type { Agent } from 'undici';
  const AgentClass: typeof Agent;
  export default AgentClass;
}
