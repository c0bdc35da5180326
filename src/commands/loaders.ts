// Every command of gds by id (`:` between words: `gds gate diff` is 'gate:diff'), each behind its own
// import, so that a run can load the one command it runs: the single executable does (scripts/sea/entry.ts,
// with the command manifest built with it). index.ts builds oclif's explicit command map from this table.
// A command module must not import heavy libraries at its top.
import type { Command } from '@oclif/core';

export interface CommandModule {
  default: Command.Class;
}

export const COMMAND_LOADERS = {
  api: () => import('./api.js'),
  'audit:list': () => import('./audit/list.js'),
  'auth:login': () => import('./auth/login.js'),
  'auth:logout': () => import('./auth/logout.js'),
  'auth:set': () => import('./auth/set.js'),
  'auth:status': () => import('./auth/status.js'),
  certify: () => import('./certify.js'),
  'config:history': () => import('./config/history.js'),
  'config:list': () => import('./config/list.js'),
  'config:set': () => import('./config/set.js'),
  'connectors:list': () => import('./connectors/list.js'),
  'contract:set-intent': () => import('./contract/set-intent.js'),
  'definitions:push': () => import('./definitions/push.js'),
  delete: () => import('./delete.js'),
  'env:promote': () => import('./env/promote.js'),
  'gate:apply': () => import('./gate/apply.js'),
  'gate:cancel': () => import('./gate/cancel.js'),
  'gate:diff': () => import('./gate/diff.js'),
  'gate:get': () => import('./gate/get.js'),
  'gate:result': () => import('./gate/result.js'),
  'gate:run': () => import('./gate/run.js'),
  'gate:status': () => import('./gate/status.js'),
  'gate:submit': () => import('./gate/submit.js'),
  'gate:suggest': () => import('./gate/suggest.js'),
  'gate:validate': () => import('./gate/validate.js'),
  list: () => import('./list.js'),
  'members:list': () => import('./members/list.js'),
  push: () => import('./push.js'),
  'quarantine:list': () => import('./quarantine/list.js'),
  'quarantine:open': () => import('./quarantine/open.js'),
  'recertification:dismiss': () => import('./recertification/dismiss.js'),
  'recertification:list': () => import('./recertification/list.js'),
  recertify: () => import('./recertify.js'),
  reject: () => import('./reject.js'),
  status: () => import('./status.js'),
  'tokens:issue': () => import('./tokens/issue.js'),
  'tokens:refresh': () => import('./tokens/refresh.js'),
  'versions:list': () => import('./versions/list.js'),
  'versions:restore': () => import('./versions/restore.js'),
  whoami: () => import('./whoami.js'),
} satisfies Record<string, () => Promise<CommandModule>>;
