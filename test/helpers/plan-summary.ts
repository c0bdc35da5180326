// The last --json line of `gds plan` and `gds apply` as a test expects it: `{"summary":{…}}`, every count 0
// but those given.
//
//   expect(lines(run.stdout).at(-1)).toEqual(summary({ create: 3 }));
export const summary = (counts: Record<string, number>) => ({
  summary: {
    create: 0,
    replace: 0,
    unchanged: 0,
    remove: 0,
    failed: 0,
    refused: 0,
    skipped: 0,
    submit: 0,
    recertificationRequested: 0,
    ...counts,
  },
});
