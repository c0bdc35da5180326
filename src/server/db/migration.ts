/** One step of the service's own schema (migrations.ts lists them in order; a domain may hold its own). */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}
