/** Numbers for humans: fixed digits, `n/a` for null. Pure; shared by every renderer and by the verdict's reasons. */
export function num(v: number | null | undefined, digits = 3): string {
  return v === null || v === undefined || Number.isNaN(v) ? "n/a" : v.toFixed(digits);
}
