// The flags every command takes, as base-command.ts and api-command.ts declare them to oclif and as
// `gds help global-flags` prints them (help-topics.ts, which runs without oclif).
export const GLOBAL_FLAGS = {
  token: {
    description:
      'API token for this call (first in precedence, before SERVICE_TOKEN and the profile). A token on the ' +
      'command line stays in the shell history: prefer SERVICE_TOKEN, or store it once with ' +
      '`printf %s "$TOKEN" | gds auth set --token - --base URL`.',
  },
  base: { description: 'API base URL (before SERVICE_API_URL and the profile).' },
  // GDS_PROFILE and GDS_JSON as for every flag; no GDS_TOKEN or GDS_BASE: SERVICE_TOKEN and SERVICE_API_URL
  // already follow the flags in the one precedence of src/auth, and a second variable would confuse it.
  profile: { description: 'Profile to use instead of the active one.', env: 'GDS_PROFILE' },
  json: {
    description:
      'NDJSON on stdout, errors as one JSON line on stderr (also GDS_CONTENT_TYPE=json or GDS_JSON=1). ' +
      '--json id,name keeps those fields of each record.',
    env: 'GDS_JSON',
  },
  jq: {
    char: 'q',
    description:
      "Filter each JSON record with a jq expression (implies --json; no jq binary needed), e.g. --jq '.id'.",
  },
  template: {
    char: 't',
    description:
      "Format each JSON record with a Mustache template (implies --json), e.g. --template '{{id}} {{name}}' " +
      '(see `gds help formatting`).',
  },
  'max-retry-after': {
    description:
      'Longest Retry-After (seconds) gds waits out on a 429 before giving up with exit 8 (default 60).',
  },
} as const;
