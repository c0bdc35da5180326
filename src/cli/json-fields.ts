// The fields of the records each command prints under --json, by command id: what `--json a,b` accepts (any
// other name is exit 2 before anything is sent, naming these) and what the command's help lists under JSON
// FIELDS. A command whose records differ between runs (a proof or a job, a file written or not) lists every
// field any of them has; `--json a,b` gives null for a listed field a record lacks. Every command is in
// exactly one of JSON_FIELDS, VARYING_JSON_FIELDS (records whose keys are not fixed: a table's columns, the
// service's own bodies) and NO_JSON_RECORDS. test/e2e/json-fields.test.ts checks that against the command
// tree, runs each command against the reference server and holds the records' keys to these lists.

const TABLE_ROW = [
  'id',
  'name',
  'mode',
  'state',
  'environmentLabel',
  'source',
  'connectorId',
  'artifactFile',
  'project',
  'gate',
];

/** A gate job as the service gives it (gate run --gate 2|3, gate status, gate cancel). */
const GATE_JOB = [
  'id',
  'tableId',
  'type',
  'gate',
  'status',
  'params',
  'createdBy',
  'createdByEmail',
  'createdAt',
  'startedAt',
  'finishedAt',
  'error',
];

/** A Gate 1 run or submission: its checks, as `gate run` and `gate submit` print them. */
const GATE1_PROOF = [
  'id',
  'kind',
  'gate',
  'tableId',
  'passed',
  'results',
  'failedPredicates',
  'rowsChecked',
  'sample',
  'tableVersion',
  'ranAt',
];

const RECERTIFICATION_REQUEST = [
  'id',
  'tableId',
  'tableName',
  'environmentLabel',
  'cause',
  'status',
  'details',
  'createdBy',
  'createdAt',
  'dismissedBy',
  'dismissedAt',
  'count',
  'lastSeenAt',
  'resolvedBy',
  'resolvedAt',
  'resolvedVersion',
  'signals',
  'earlierSignals',
];

const CONTRACT = [
  'id',
  'intent',
  'allowedConsumers',
  'grain',
  'grainType',
  'grainKeyColumns',
  'meaning',
  'certifiedAt',
  'revision',
  'status',
];

const INTEGRATION_TOKEN = [
  'id',
  'name',
  'clientToken',
  'audience',
  'scopes',
  'environment',
  'userId',
  'issuedBy',
  'createdAt',
  'lastUsedAt',
  'revokedAt',
];

/** `gds tokens list|revoke`: an integration token's fields, a CLI token's `token`, and which kind it is. */
const ANY_TOKEN = ['kind', ...INTEGRATION_TOKEN, 'token'];

const STATUS = [
  'id',
  'governanceId',
  'name',
  'mode',
  'state',
  'gate',
  'environmentLabel',
  'source',
  'project',
  'definitionVersion',
  'gate1Version',
  'dataVersion',
  'contractVersion',
  'certification',
  'certifiedView',
  'schemaDrift',
  'activeJobs',
  'openRecertificationRequests',
];

/** One of gds's own settings (src/cli/settings.ts), as `settings get|list` print it. */
const SETTING = ['key', 'value', 'source', 'default', 'allowedValues', 'overriddenBy', 'description'];
const SETTING_CHANGE = ['key', 'value', 'previous', 'path'];
/** A command alias (`alias list`; set and import add the expansion it replaced). */
const ALIAS = ['name', 'expansion', 'shell'];

export const JSON_FIELDS: Readonly<Record<string, readonly string[]>> = {
  list: TABLE_ROW,
  'quarantine:list': TABLE_ROW,
  'connectors:list': ['id', 'name', 'type', 'status', 'environmentLabel'],
  'gate:jobs': ['id', 'gate', 'type', 'status', 'startedAt', 'endedAt', 'proof'],
  'gate:suggest': ['tableId', 'yaml', 'suggestions', 'notes', 'profile'],
  'versions:list': [
    'version',
    'kind',
    'environmentLabel',
    'certifiedAt',
    'certifiedBy',
    'certifiedByEmail',
    'grain',
    'contract',
    'restoredFrom',
    'reason',
  ],
  'audit:list': [
    'id',
    'userId',
    'userEmail',
    'tableId',
    'action',
    'resource',
    'environmentLabel',
    'gateModeAtEvaluation',
    'createdAt',
    'details',
  ],
  'members:list': ['userId', 'email', 'role', 'envScope'],
  'config:list': ['key', 'value', 'allowedValues', 'updatedAt', 'updatedBy', 'updatedByEmail'],
  'config:history': ['key', 'oldValue', 'newValue', 'changedBy', 'changedByEmail', 'changedAt'],
  whoami: [
    'profile',
    'tokenSource',
    'user',
    'workspace',
    'role',
    'token',
    'effectiveEnvironmentScope',
    'doors',
  ],
  // With --web: the dashboard's address instead (tableId, url).
  status: [...STATUS, 'tableId', 'url'],
  'config:set': ['key', 'value', 'allowedValues', 'updatedAt', 'updatedBy', 'updatedByEmail', 'changed'],
  // --dry-run: changed, diff; else the registration, with the finished job under --wait.
  push: ['changed', 'diff', 'governanceId', 'trackingUrl', 'job', 'tableId', 'state', 'definitionVersion'],
  'definitions:push': [
    'governanceId',
    'trackingUrl',
    'job',
    'tableId',
    'state',
    'definitionVersion',
    'replaced',
  ],
  'gate:cancel': GATE_JOB,
  'gate:status': GATE_JOB,
  'gate:result': [...GATE_JOB, 'result'],
  // Gate 1 runs here and prints its checks; --gate 2|3 queues a job and prints it.
  'gate:run': [...new Set([...GATE1_PROOF, ...GATE_JOB])],
  // The proof (replayed: true when the service answered as to an earlier run with the same --idempotency-key);
  // with --if-not-certified on a CERTIFIED table: skipped, tableId, state, certifiedView, reason.
  'gate:submit': [
    ...GATE1_PROOF,
    'state',
    'notificationId',
    'viewWithdrawn',
    'withdrawnView',
    'replayed',
    'skipped',
    'certifiedView',
    'reason',
  ],
  // One line per diagnostic, then the summary (valid, file, errors, warnings).
  'gate:validate': [
    'file',
    'line',
    'column',
    'path',
    'severity',
    'code',
    'message',
    'valid',
    'errors',
    'warnings',
  ],
  'gate:apply': [
    'tableId',
    'version',
    'createdBy',
    'createdAt',
    'warnings',
    'recertificationRequestId',
    'changed',
  ],
  // With --output: the file written.
  'gate:get': ['tableId', 'version', 'content', 'createdBy', 'createdAt', 'file'],
  'gate:diff': ['identical', 'semantic', 'hunks'],
  certify: ['id', 'status', 'certifiedAt', 'grain', 'grainType', 'grainKeyColumns'],
  reject: ['tableId', 'state'],
  review: [
    'id',
    'kind',
    'message',
    'tableId',
    'tableName',
    'environmentLabel',
    'state',
    'createdAt',
    'submittedBy',
    'proof',
    'sinceCertified',
    'openRecertificationRequests',
  ],
  delete: ['id', 'governanceId', 'state', 'deletedAt'],
  // --dry-run: changed, diff; --bundle-out: tableId, file, sha256; else the registration in the target.
  'env:promote': [
    'changed',
    'diff',
    'tableId',
    'file',
    'sha256',
    'environmentLabel',
    'connectorId',
    'governanceId',
    'trackingUrl',
    'job',
  ],
  'quarantine:open': ['path', 'tableId', 'name', 'state'],
  // --dry-run: changed, diff; else the contract.
  'contract:set-intent': [...CONTRACT, 'changed', 'diff'],
  'versions:restore': ['tableId', 'state', 'version', 'recertificationRequestId'],
  'recertification:list': RECERTIFICATION_REQUEST,
  'recertification:dismiss': RECERTIFICATION_REQUEST,
  recertify: ['environmentLabel', 'submitted', 'governed', 'outcomes'],
  plan: [
    'table',
    'source',
    'action',
    'tableId',
    'uniqueId',
    'resourceType',
    'mappedTests',
    'notMappedTests',
    'rules',
    'changes',
    'diffs',
    'reason',
    'ownership',
    'owner',
    'adopt',
    'migrate',
    'downstreamCertified',
    'recertificationRequested',
    'staleSubmission',
    'summary',
  ],
  // The last line is {"summary":{…}}; recertificationRequested only on a write that filed one, reason only on a
  // step that wrote nothing for a reason to tell (a CERTIFIED table --submit leaves as it is).
  apply: [
    'table',
    'tableId',
    'step',
    'outcome',
    'version',
    'reason',
    'error',
    'recertificationRequested',
    'summary',
  ],
  'tokens:issue': ['id', 'name', 'clientToken', 'audience', 'env', 'scopes', 'tokens'],
  'tokens:refresh': ['tokens'],
  // Integration tokens, or with --cli CLI tokens (id, userId, token, createdAt, lastUsedAt, revokedAt).
  'tokens:list': ANY_TOKEN,
  'tokens:revoke': ANY_TOKEN,
  // The rows refused, each with its reason (the summary goes to stderr).
  'records:import': ['row', 'line', 'error'],
  'records:delete': ['tableId', 'id', 'deleted'],
  'auth:login': [
    'profile',
    'base',
    'kind',
    'issuer',
    'expiresAt',
    'storage',
    'storageLocation',
    'active',
    'email',
    'role',
  ],
  'auth:set': [
    'profile',
    'base',
    'token',
    'storage',
    'storageLocation',
    'active',
    'verified',
    'email',
    'role',
  ],
  'auth:status': [
    'signedIn',
    'baseUrl',
    'baseSource',
    'token',
    'tokenSource',
    'storage',
    'storageLocation',
    'profile',
    'activeProfile',
    'profiles',
    'configPath',
    'secretStorage',
    'problems',
    'expiresAt',
    'verified',
    'email',
    'role',
    'doors',
    'refused',
  ],
  'auth:token': ['token', 'tokenSource', 'profile'],
  'auth:token:create': ['id', 'name', 'token', 'userId', 'createdAt'],
  'auth:switch': ['activeProfile', 'previous', 'base'],
  'auth:revoke': ['revoked'],
  'auth:logout': ['removed', 'activeProfile', 'configFileRemoved', 'configPath'],
  'alias:set': [...ALIAS, 'previous'],
  'alias:import': [...ALIAS, 'previous'],
  'alias:list': ALIAS,
  'alias:delete': ALIAS,
  'settings:list': SETTING,
  'settings:get': SETTING,
  'settings:set': SETTING_CHANGE,
  'settings:unset': SETTING_CHANGE,
};

/** Commands whose records have no fixed keys: what their help says instead of a list. */
export const VARYING_JSON_FIELDS: Readonly<Record<string, string>> = {
  'records:list': 'id and the columns of the table (`gds records list TABLE --json` shows them).',
  'records:get': 'id and the columns of the table.',
  'records:create': 'id and the columns of the table.',
  'records:update': 'id and the columns of the table.',
  'records:export':
    'id and the columns of the table; with --output, one summary: tableId, format, rows, output, ' +
    'resumedFrom, requests, waitedMs.',
  api: "the service's response body as it is (with --paginate, each item of each page).",
};

/** Commands that print no records under --json, and why. */
export const NO_JSON_RECORDS: Readonly<Record<string, string>> = {
  completion: 'prints a shell script (refused under --json, exit 2)',
  __complete: 'prints completion candidates for the shell scripts, one a line',
};
