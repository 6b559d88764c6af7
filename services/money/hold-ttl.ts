/**
 * The `ttl` of a hold (docs/reference/money.md#rule-7): `<integer><unit>` with unit s, m, h or d (`90s`, `30m`,
 * `72h`, `7d`), or an ISO 8601 duration of days, hours, minutes and seconds (`PT30M`, `P1DT12H`,
 * `PT90S`). At least 1 s and at most 168 h; anything else is refused by the caller with 400.
 */
export const MAX_HOLD_TTL_SECONDS = 168 * 3600;

const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;
const SHORT_FORM = /^(\d{1,9})([smhd])$/;
// Years, months and weeks are left out: a month has no fixed length, and no TTL needs them.
const ISO_FORM = /^P(?:(\d{1,9})D)?(?:T(?:(\d{1,9})H)?(?:(\d{1,9})M)?(?:(\d{1,9})S)?)?$/;

/** The TTL in seconds, or null when the text is not a duration of the grammar or is out of bounds. */
export function parseHoldTtl(text: string): number | null {
  const seconds = durationSeconds(text.trim());
  return seconds !== null && seconds >= 1 && seconds <= MAX_HOLD_TTL_SECONDS ? seconds : null;
}

function durationSeconds(text: string): number | null {
  const short = SHORT_FORM.exec(text);
  if (short) return Number(short[1]) * UNIT_SECONDS[short[2] as keyof typeof UNIT_SECONDS];
  const iso = ISO_FORM.exec(text);
  // "P" and "PT" alone match the pattern with no component: not a duration.
  if (!iso || text === 'P' || text.endsWith('T')) return null;
  const [days, hours, minutes, seconds] = iso.slice(1).map((part) => Number(part ?? 0));
  return days * 86_400 + hours * 3600 + minutes * 60 + seconds;
}
