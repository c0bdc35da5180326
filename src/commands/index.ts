// The explicit command map oclif loads (package.json oclif.commands); filled as commands land.
export const COMMANDS = {};
