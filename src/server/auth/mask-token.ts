export { tokenHint as maskToken } from '../../core/token-hint.js';
