import { StepFailed } from './failures';
import { REQUEST_TIMEOUT_MS } from './timeouts';
import { waitUntil } from './wait';

// The e-mails the platform sends (verification, invitation), read through Mailpit's HTTP API.

export interface MailSummary {
  ID: string;
  Subject: string;
}

export class Mailpit {
  constructor(private readonly base: string) {}

  private async read<T>(path: string): Promise<T> {
    const response = await fetch(`${this.base}/api/v1${path}`, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    if (!response.ok) throw new Error(`Mailpit ${path} answered ${response.status}`);
    return (await response.json()) as T;
  }

  /** The one-time token of the first mail to `address` whose subject starts with `subject` (`token=` of its link). */
  async linkToken(address: string, subject: string): Promise<{ token: string; subject: string }> {
    return waitUntil(`a mail "${subject}…" to ${address}`, async () => {
      const found = await this.read<{ messages: MailSummary[] }>(`/search?query=${encodeURIComponent(`to:"${address}"`)}`);
      const mail = found.messages.find((message) => message.Subject.startsWith(subject));
      if (!mail) return [undefined, `${found.messages.length} mail(s): ${found.messages.map((m) => m.Subject).join(', ') || 'none'}`];
      const { Text } = await this.read<{ Text: string }>(`/message/${mail.ID}`);
      const match = /[?&]token=([A-Za-z0-9_-]{43})\b/.exec(Text);
      if (!match) throw new StepFailed(`the mail "${mail.Subject}" has no link with a token: ${Text.slice(0, 200)}`);
      return [{ token: match[1], subject: mail.Subject }, mail.Subject];
    });
  }
}
