// The floor of `gds push --dry-run` of a view: what Node alone needs to load PostgreSQL's parser
// (libpg-query's WebAssembly, as its package ships it) and parse the view once. Run it with `--liftoff-only`,
// as gds parses (src/core/wasm-tier-up.ts: TurboFan tier-up costs far more than a single parse gains).
// CommonJS, as gds's own bundles are: Node's ES module loader alone costs more than a few milliseconds.
const { readFileSync } = require('node:fs');
const { loadModule, parseSync } = require('libpg-query');

const sql = readFileSync(process.argv[2] ?? '', 'utf8');
loadModule().then(() => {
  const tree = parseSync(sql);
  process.stdout.write(`${tree.stmts.length} statement(s)\n`);
});
