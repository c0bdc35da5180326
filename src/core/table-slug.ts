// A table's slug: its name lowered, each run of characters other than a-z, 0-9 and _ made one _, and _ trimmed
// from both ends. The service holds one active table a slug in a workspace, as it holds one a name (compared
// lowered): `raw-source-0` and `raw_source_0` are one table name to it. `gds plan` compares slugs as it does.

export function slugOf(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '');
}
