// The column checks live in src/core (gds records import checks rows with them before sending).
export * from '../../core/record-values.js';
