// `npm run bench [name…]`: runs every module of scripts/bench/ (or the named ones) and prints one table.
// Not a test: figures, no assertions. A module exports `run: BenchModule` (scripts/bench/types.ts).
import { readdirSync } from 'node:fs';
import type { BenchModule, BenchRow } from './bench/types.js';

const benchDir = new URL('./bench/', import.meta.url);
const order = ['startup', 'validate', 'core'];

function moduleNames(): string[] {
  const names = readdirSync(benchDir)
    .filter((file) => file.endsWith('.ts') && file !== 'types.ts')
    .map((file) => file.slice(0, -'.ts'.length));
  const rank = (name: string) => (order.includes(name) ? order.indexOf(name) : order.length);
  return names.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const rows: BenchRow[] = [];
  for (const name of moduleNames()) {
    if (only.length > 0 && !only.includes(name)) continue;
    process.stderr.write(`bench: ${name}…\n`);
    const { run } = (await import(new URL(`${name}.ts`, benchDir).href)) as { run: BenchModule };
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
