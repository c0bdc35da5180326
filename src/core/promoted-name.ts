// A table's name in the environment it is promoted to (`gds env promote`): what the server lands it as, and
// what `gds plan` recognises as that table's name there.

/**
 * The name in the target environment: unchanged in the same environment, else the name without its
 * source-environment suffix plus the target's (`customers` in dev -> `customers_staging`), since a
 * table name is unique in a workspace.
 */
export function promotedName(name: string, fromEnv: string, toEnv: string): string {
  if (fromEnv === toEnv) return name;
  const base = name.endsWith(`_${fromEnv}`) ? name.slice(0, -(fromEnv.length + 1)) : name;
  return `${base}_${toEnv}`;
}
