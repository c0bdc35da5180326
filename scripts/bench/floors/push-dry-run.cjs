// The floor of `gds push --dry-run` of a view: the two things it cannot do without, in Node alone — load
// PostgreSQL's parser (libpg-query's WebAssembly, as its package ships it) and parse the view once, then ask
// the service for the connectors (`GET /api/connectors`, the one request a dry run sends) over node:http.
// Run it with `--liftoff-only`, as gds parses (src/core/wasm-tier-up.ts). CommonJS, as gds's own bundles are.
const { readFileSync } = require('node:fs');
const { get } = require('node:http');
const { loadModule, parseSync } = require('libpg-query');

const sql = readFileSync(process.argv[2] ?? '', 'utf8');
// Relative to the REST base URL, which holds a stage segment (…/v1): an absolute path would drop it.
const url = new URL('api/connectors', process.env.SERVICE_API_URL.replace(/\/*$/, '/'));
loadModule().then(() => {
  const tree = parseSync(sql);
  get(url, { headers: { authorization: `Bearer ${process.env.SERVICE_TOKEN}` } }, (response) => {
    if (response.statusCode !== 200) process.exitCode = 1;
    response.resume();
    response.on('end', () => process.stdout.write(`${tree.stmts.length} statement(s)\n`));
  });
});
