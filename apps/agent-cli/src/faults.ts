// The trouble a demo run meets on purpose: installed in the embedded API before each run.
import { readFile } from 'node:fs/promises';
import { HttpClient } from '@agentwire/http-client';

export const DEMO_FAULTS = {
  seed: 42,
  rules: [
    { method: 'GET', path: '/emails', action: 'status', status: 503, times: 2 },
    { method: 'POST', path: '/digest', action: 'status', status: 429, retry_after_s: 1, times: 1 },
    { method: 'POST', path: '/digest', action: 'cut_stream', after_events: 3, times: 1 },
  ],
};

/** 'demo', 'none', or a JSON file with {seed?, rules}. */
export async function faultConfig(choice: string): Promise<unknown> {
  if (choice === 'demo') return DEMO_FAULTS;
  if (choice === 'none') return { rules: [] };
  try {
    return JSON.parse(await readFile(choice, 'utf8'));
  } catch (error) {
    throw new Error(
      `--faults must be demo, none or a JSON file of rules; cannot use '${choice}': ${(error as Error).message}`,
    );
  }
}

export async function installFaults(apiUrl: string, apiKey: string, config: unknown): Promise<void> {
  const admin = new HttpClient({ baseUrl: apiUrl, auth: { key: apiKey }, maxRetries: 0 });
  try {
    await admin.request({ method: 'PUT', path: '/admin/faults', json: config });
  } finally {
    await admin.close();
  }
}
