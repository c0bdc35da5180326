// The explicit command map oclif loads (package.json oclif.commands, identifier COMMANDS): one entry per
// command, keyed by its id with `:` between words (`gds gate diff` is 'gate:diff'). A command module
// must not import heavy libraries at its top: importing this map is part of every start-up.
import GateDiff from './gate/diff.js';
import GateValidate from './gate/validate.js';

export const COMMANDS = {
  'gate:diff': GateDiff,
  'gate:validate': GateValidate,
};
