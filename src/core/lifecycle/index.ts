export { transition } from './transition.js';
export { GUARDS, TRANSITIONS } from './table.js';
export type { FromStates, GuardName, Move, Refusal, TransitionRow } from './table.js';
export { LIFECYCLE_STATES, SOFT_DELETED, TRIGGERS } from './types.js';
export type * from './types.js';
