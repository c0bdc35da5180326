// The floor of `gds list --json`: what Node alone needs to ask the service for the same first page
// (`GET /api/tables?limit=100&total=false`, the request gds sends) over node:http, as gds's transport does,
// and print the answer's body. Nothing of a CLI around it: no flags, config, output or client. CommonJS, as
// gds's own bundles are: Node's ES module loader alone costs more than this whole script.
const { get } = require('node:http');

// Relative to the REST base URL, which holds a stage segment (…/v1): an absolute path would drop it.
const base = process.env.SERVICE_API_URL.replace(/\/*$/, '/');
const url = new URL('api/tables?limit=100&total=false', base);
get(url, { headers: { authorization: `Bearer ${process.env.SERVICE_TOKEN}` } }, (response) => {
  if (response.statusCode !== 200) process.exitCode = 1;
  response.pipe(process.stdout);
});
