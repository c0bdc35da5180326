// Counts and rates as the gate reports word them.

export const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** 0.25 -> "25%", 0.125 -> "12.5%". */
export const percent = (rate: number): string => `${(rate * 100).toFixed(1).replace(/\.0$/, '')}%`;
