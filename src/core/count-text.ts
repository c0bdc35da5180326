// Numbers in messages as `toLocaleString('en')` writes them (`262,144`), without ICU: the first Intl call of a
// process maps ICU's locale data, which costs a start-up path such as `gds gate validate` about 15 ms of CPU
// and 7 MiB of peak memory (measured on dist/gds) for a string that is only shown on a refusal.
/** `1234567` → `1,234,567`; a number that is not a safe integer is left to toLocaleString. */
export function countText(value: number): string {
  if (!Number.isSafeInteger(value)) return value.toLocaleString('en');
  const digits = String(Math.abs(value));
  let grouped = digits.slice(0, digits.length % 3 || 3);
  for (let i = grouped.length; i < digits.length; i += 3) grouped += `,${digits.slice(i, i + 3)}`;
  return value < 0 ? `-${grouped}` : grouped;
}
