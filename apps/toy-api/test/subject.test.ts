// Who wrote what: a reply records the caller's subject, and every log line of a request names it.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';

describe('the caller on what the API stores and logs', () => {
  it('stores written_by on a reply and puts sub on the request log lines (the key is api-key)', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    const app = await buildApp({ apiKey: 'subject-test-key-0123', logger: { level: 'info', stream } });
    try {
      const sent = await app.inject({
        method: 'POST',
        url: '/emails/m-0007/reply',
        headers: { authorization: 'Bearer subject-test-key-0123', 'content-type': 'application/json' },
        payload: { body: 'On it.' },
      });
      expect(sent.statusCode).toBe(201);
      expect(sent.json().written_by).toBe('api-key');
      const listed = await app.inject({
        method: 'GET',
        url: '/emails/m-0007/replies',
        headers: { authorization: 'Bearer subject-test-key-0123' },
      });
      expect(listed.json().data).toEqual([expect.objectContaining({ body: 'On it.', written_by: 'api-key' })]);
      const completed = lines.filter((l) => l.msg === 'request completed');
      expect(completed).toHaveLength(2);
      for (const line of completed) expect(line.sub).toBe('api-key');
      expect(JSON.stringify(lines)).not.toContain('subject-test-key-0123');
    } finally {
      await app.close();
    }
  });
});
