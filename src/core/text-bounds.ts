// The lengths of what a caller writes that the service keeps, one definition for gds and the service.

/** The recertification signal's `trigger`. */
export const MAX_TRIGGER_CHARS = 200;
/** A table name (or schema, or definition hash) of the recertification signal's `tables`. */
export const MAX_SIGNAL_NAME_CHARS = 1_024;
