// The floor of `gds push --dry-run` of a view: the two things it cannot do without, in Node alone — load
// PostgreSQL's parser and parse the view once, then ask the service for the connectors (`GET /api/connectors`,
// the one request a dry run sends) over node:http. The parser is the one dist/gds carries: the native addon
// build:binary made (GDS_BENCH_PG_PARSER_ADDON names it; scripts/bundle/pg-parser-addon.ts), else libpg-query's
// WebAssembly as its package ships it, run with `--liftoff-only` as gds parses (src/core/wasm-tier-up.ts).
// CommonJS, as gds's own bundles are.
const { readFileSync } = require('node:fs');
const { get } = require('node:http');

const sql = readFileSync(process.argv[2] ?? '', 'utf8');
// Relative to the REST base URL, which holds a stage segment (…/v1): an absolute path would drop it.
const url = new URL('api/connectors', process.env.SERVICE_API_URL.replace(/\/*$/, '/'));

function parsedNatively(addonFile) {
  const addon = { exports: {} };
  process.dlopen(addon, addonFile);
  const parser = addon.exports;
  const length = Buffer.byteLength(sql) + 1;
  const text = parser._malloc(length);
  parser.stringToUTF8(sql, text, length);
  const result = parser._wasm_parse_query_raw(text);
  const tree = JSON.parse(parser.UTF8ToString(parser.getI32(result)));
  parser._wasm_free_parse_result(result);
  parser._free(text);
  return Promise.resolve(tree);
}

function parsedByWebAssembly() {
  const { loadModule, parseSync } = require('libpg-query');
  return loadModule().then(() => parseSync(sql));
}

const addonFile = process.env.GDS_BENCH_PG_PARSER_ADDON;
(addonFile ? parsedNatively(addonFile) : parsedByWebAssembly()).then((tree) => {
  get(url, { headers: { authorization: `Bearer ${process.env.SERVICE_TOKEN}` } }, (response) => {
    if (response.statusCode !== 200) process.exitCode = 1;
    response.resume();
    response.on('end', () => process.stdout.write(`${tree.stmts.length} statement(s)\n`));
  });
});
