/**
 * Billing periods by calendar, as the providers count them: a monthly period started on the 31st ends
 * on the last day of a shorter month, not in the month after. Pure (runs inside the workflow).
 */
export function addInterval(startIso: string, interval: 'monthly' | 'yearly'): string {
  const start = new Date(startIso);
  const months = interval === 'monthly' ? 1 : 12;
  const end = new Date(start.getTime());
  end.setUTCDate(1);
  end.setUTCMonth(end.getUTCMonth() + months);
  const lastDay = new Date(Date.UTC(end.getUTCFullYear(), end.getUTCMonth() + 1, 0)).getUTCDate();
  end.setUTCDate(Math.min(start.getUTCDate(), lastDay));
  return end.toISOString();
}
