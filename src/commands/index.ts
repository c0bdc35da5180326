// The explicit command map oclif loads (package.json oclif.commands, identifier COMMANDS): one entry per
// command, keyed by its id with `:` between words (`gds gate diff` is 'gate:diff'). A command module
// must not import heavy libraries at its top: importing this map is part of every start-up.
import Api from './api.js';
import AuditList from './audit/list.js';
import AuthLogin from './auth/login.js';
import AuthLogout from './auth/logout.js';
import AuthSet from './auth/set.js';
import AuthStatus from './auth/status.js';
import ConnectorsList from './connectors/list.js';
import DefinitionsPush from './definitions/push.js';
import Delete from './delete.js';
import GateDiff from './gate/diff.js';
import GateValidate from './gate/validate.js';
import List from './list.js';
import MembersList from './members/list.js';
import Push from './push.js';
import QuarantineList from './quarantine/list.js';
import QuarantineOpen from './quarantine/open.js';
import RecertificationDismiss from './recertification/dismiss.js';
import RecertificationList from './recertification/list.js';
import Recertify from './recertify.js';
import Status from './status.js';
import TokensIssue from './tokens/issue.js';
import TokensRefresh from './tokens/refresh.js';
import Whoami from './whoami.js';

export const COMMANDS = {
  api: Api,
  'audit:list': AuditList,
  'auth:login': AuthLogin,
  'auth:logout': AuthLogout,
  'auth:set': AuthSet,
  'auth:status': AuthStatus,
  'connectors:list': ConnectorsList,
  'definitions:push': DefinitionsPush,
  delete: Delete,
  'gate:diff': GateDiff,
  'gate:validate': GateValidate,
  list: List,
  'members:list': MembersList,
  push: Push,
  'quarantine:list': QuarantineList,
  'quarantine:open': QuarantineOpen,
  'recertification:dismiss': RecertificationDismiss,
  'recertification:list': RecertificationList,
  recertify: Recertify,
  status: Status,
  'tokens:issue': TokensIssue,
  'tokens:refresh': TokensRefresh,
  whoami: Whoami,
};
