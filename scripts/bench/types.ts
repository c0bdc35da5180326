/** One row of the `npm run bench` table. Each bench module returns its rows; scripts/bench.ts prints them. */
export interface BenchRow {
  section: string;
  name: string;
  value: string;
  note?: string;
}

export type BenchModule = () => Promise<BenchRow[]>;
