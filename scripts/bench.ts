// `npm run bench`: runs every bench module in turn and prints one table. Not a test: figures, no assertions.
import type { BenchModule, BenchRow } from './bench/types.js';

const modules: Array<[string, () => Promise<{ run: BenchModule }>]> = [
  ['startup', () => import('./bench/startup.js')],
  ['validate', () => import('./bench/validate.js')],
];

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const rows: BenchRow[] = [];
  for (const [name, load] of modules) {
    if (only.length > 0 && !only.includes(name)) continue;
    process.stderr.write(`bench: ${name}…\n`);
    const { run } = await load();
    rows.push(...(await run()));
  }
  printTable(rows);
}

function printTable(rows: BenchRow[]): void {
  const header: BenchRow = { section: 'section', name: 'measure', value: 'value', note: 'note' };
  const all = [header, ...rows];
  const width = (key: keyof BenchRow) => Math.max(...all.map((r) => (r[key] ?? '').length));
  const w = { section: width('section'), name: width('name'), value: width('value') };
  for (const r of all) {
    const line = [
      r.section.padEnd(w.section),
      r.name.padEnd(w.name),
      r.value.padStart(w.value),
      r.note ?? '',
    ];
    process.stdout.write(`${line.join('  ').trimEnd()}\n`);
  }
}

await main();
