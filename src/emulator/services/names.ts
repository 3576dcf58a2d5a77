// What an error names when it lists what there is (game modes, regions): a few names, in words.
const NAMED = 10;

/** `a, b and c`; past ten, `… and 12 more` (never `1 more`: the one is named instead). */
export function nameList(names: readonly string[]): string {
  const shown = names.length <= NAMED + 1 ? [...names] : [...names.slice(0, NAMED), `${names.length - NAMED} more`];
  return shown.length === 1 ? shown[0]! : `${shown.slice(0, -1).join(', ')} and ${shown.at(-1)}`;
}
