// The day's digest: the most urgent emails of a date, as items and as prose. The prose is
// what the SSE stream sends, one word per `delta` event.
import type { Digest, DigestItem } from '@agentwire/schemas';
import { EMAILS, findEmployee } from './data/company.js';

export function buildDigest(date: string, maxItems: number): Digest {
  const ofDay = EMAILS.filter((e) => e.date === date);
  const chosen = [...ofDay]
    .sort((a, b) => Number(b.urgent) - Number(a.urgent) || a.sent_at.localeCompare(b.sent_at))
    .slice(0, maxItems);
  const items: DigestItem[] = chosen.map((e) => ({
    email_id: e.id,
    from: e.from,
    from_name: findEmployee(e.from)?.name ?? e.from,
    subject: e.subject,
    urgent: e.urgent,
  }));
  const urgentCount = ofDay.filter((e) => e.urgent).length;
  const lines = [
    `Digest for ${date}: ${ofDay.length} emails, ${urgentCount} urgent.`,
    ...items.map((item, i) => `${i + 1}. ${item.from_name}: ${item.subject}${item.urgent ? ' (urgent)' : ''}.`),
  ];
  if (ofDay.length === 0) lines.push('Nothing arrived that day.');
  return { date, item_count: items.length, items, text: lines.join(' ') };
}

/** Splits text into pieces that concatenate back to it exactly: "a b" -> ["a", " b"]. */
export function wordDeltas(text: string): string[] {
  return text.match(/\s*\S+/g) ?? [];
}
