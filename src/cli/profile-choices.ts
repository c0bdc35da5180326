// The stored profiles as choices of a picker (auth switch, auth logout): name, base, user and kind on one
// line, the active one marked.
import type { Choice } from './prompt.js';

const kinds = { static: 'CLI token', session: 'browser sign-in', integration: 'integration token' } as const;

export async function profileChoices(names: readonly string[]): Promise<Array<Choice<string>>> {
  const { loadConfig } = await import('../auth/config.js');
  const config = await loadConfig();
  const rows = names.map((name) => {
    const profile = config.profiles[name];
    return {
      name,
      base: profile?.base ?? '',
      user: profile?.user ?? '-',
      kind: profile === undefined ? '' : kinds[profile.kind],
    };
  });
  const width = (pick: (row: (typeof rows)[number]) => string) =>
    Math.max(0, ...rows.map((row) => pick(row).length));
  const [nameWidth, baseWidth, userWidth] = [
    width((r) => r.name),
    width((r) => r.base),
    width((r) => r.user),
  ];
  return rows.map((row) => ({
    value: row.name,
    name:
      `${row.name.padEnd(nameWidth)}  ${row.base.padEnd(baseWidth)}  ${row.user.padEnd(userWidth)}  ${row.kind}` +
      (row.name === config.activeProfile ? '  (active)' : ''),
  }));
}
