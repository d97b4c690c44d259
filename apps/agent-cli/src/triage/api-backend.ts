// The task straight against the API, through packages/http-client.
import type { HttpClient } from '@agentwire/http-client';
import { type Email, EmailPage, Employee, OfficeDays, Reply } from '@agentwire/schemas';
import type { TriageBackend } from './backend.js';

export class ApiBackend implements TriageBackend {
  readonly name = 'api';
  readonly #client: HttpClient;

  constructor(client: HttpClient) {
    this.#client = client;
  }

  async urgentEmails(date: string, cursor: string | undefined) {
    const page = await this.#client.get('/emails', {
      query: { urgent: true, date, limit: 5, cursor },
      route: '/emails',
      schema: EmailPage,
    });
    return page.data;
  }

  async employee(id: string) {
    return (
      await this.#client.get(`/employees/${encodeURIComponent(id)}`, {
        route: '/employees/{employee_id}',
        schema: Employee,
      })
    ).data;
  }

  async officeDays(id: string) {
    return (
      await this.#client.get(`/employees/${encodeURIComponent(id)}/office-days`, {
        route: '/employees/{employee_id}/office-days',
        schema: OfficeDays,
      })
    ).data;
  }

  async digest(date: string, onText: (text: string) => void): Promise<string> {
    let text = '';
    // The digest only computes, so repeating it is safe: retries and resumes are allowed.
    for await (const event of this.#client.stream({
      method: 'POST',
      path: '/digest',
      json: { date, max_items: 5 },
      idempotent: true,
    })) {
      if (event.event !== 'delta') continue;
      const piece = (JSON.parse(event.data) as { text: string }).text;
      text += piece;
      onText(piece);
    }
    return text;
  }

  async reply(emailId: string, body: string) {
    const response = await this.#client.post(
      `/emails/${encodeURIComponent(emailId)}/reply`,
      { body },
      { idempotencyKey: true, route: '/emails/{email_id}/reply', schema: Reply },
    );
    return response.data;
  }

  async close() {}
}

export type { Email };
