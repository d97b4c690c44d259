import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { httpV1, httpV2, startHttpGateway, startToyApi, stdioV1 } from './support/stack.js';

const DIGEST = { name: 'create_digest', arguments: { date: '2026-06-10', max_items: 2, interval_ms: 0 } };

describe('progress from the streamed digest', () => {
  it('forwards the upstream events as progress notifications with their text, the ones past the burst joined (stdio, 2025-11-25)', async () => {
    const api = await startToyApi();
    const { client } = await stdioV1(api);
    const progress: Array<{ progress: number; message?: string | undefined }> = [];
    const result = await client.callTool(DIGEST, undefined, { onprogress: (p) => progress.push(p) });
    const digest = result.structuredContent as { text: string };
    // One notification per event up to the burst (20), each with its event's number; the texts
    // of the events after it ride together (interval_ms 0: they come at once). The SDK may drop
    // the very last notification (it races the result), so the texts are a prefix of the digest.
    expect(progress.length).toBeGreaterThan(10);
    expect(progress.slice(0, 10).map((p) => p.progress)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    expect(progress.every((p, i) => i === 0 || p.progress > (progress[i - 1] as { progress: number }).progress)).toBe(
      true,
    );
    // The closing event's notification says 'done' (the result follows), not more of the text.
    const said = progress
      .map((p) => p.message)
      .filter((m) => m !== 'done')
      .join('');
    expect(said.length).toBeGreaterThan(0);
    expect(digest.text.startsWith(said)).toBe(true);
  });

  it('over HTTP the call answers as an SSE stream carrying the progress first', async () => {
    const api = await startToyApi();
    const { client } = await httpV1(await startHttpGateway(api));
    const progress: unknown[] = [];
    const result = await client.callTool(DIGEST, undefined, { onprogress: (p) => progress.push(p) });
    expect(result.isError).toBeFalsy();
    expect(progress.length).toBeGreaterThan(10);
  });

  it('leaves out the message field for 2024-11-05, which does not have it', async () => {
    const api = await startToyApi();
    const { client } = await httpV1(await startHttpGateway(api), '2024-11-05');
    const progress: Array<Record<string, unknown>> = [];
    await client.callTool(DIGEST, undefined, { onprogress: (p) => progress.push(p) });
    expect(progress.length).toBeGreaterThan(10);
    for (const p of progress) expect(p).not.toHaveProperty('message');
  });

  it('works for the stateless revision too (v2 client)', async () => {
    const api = await startToyApi();
    const { client } = await httpV2(await startHttpGateway(api));
    const progress: unknown[] = [];
    const result = await client.callTool(DIGEST, { onprogress: (p) => progress.push(p) });
    expect(result.isError).toBeFalsy();
    expect(progress.length).toBeGreaterThan(10);
  });
});

describe('cancellation reaches the upstream', () => {
  const cancels = async (
    call: (signal: AbortSignal) => Promise<unknown>,
    api: Awaited<ReturnType<typeof startToyApi>>,
  ) => {
    const controller = new AbortController();
    const pending = call(controller.signal);
    await expect.poll(() => api.app.toy.activeSlowTimers(), { timeout: 15_000 }).toBe(1);
    controller.abort('changed my mind');
    await expect(pending).rejects.toThrow();
    // The gateway aborted its upstream request: the toy API saw the client go and stopped waiting.
    await expect.poll(() => api.app.toy.slowEndedEarly(), { timeout: 15_000 }).toBe(1);
    expect(api.app.toy.activeSlowTimers()).toBe(0);
  };

  it('notifications/cancelled over stdio', async () => {
    const api = await startToyApi();
    const { client } = await stdioV1(api);
    await cancels((signal) => client.callTool({ name: 'slow', arguments: { ms: 8000 } }, undefined, { signal }), api);
    // The session is still usable, and nothing was sent for the cancelled request.
    expect((await client.callTool({ name: 'health', arguments: {} })).isError).toBeFalsy();
  });

  it('notifications/cancelled over HTTP', async () => {
    const api = await startToyApi();
    const { client } = await httpV1(await startHttpGateway(api));
    await cancels((signal) => client.callTool({ name: 'slow', arguments: { ms: 8000 } }, undefined, { signal }), api);
  });

  it('the HTTP client going away (stateless revision)', async () => {
    const api = await startToyApi();
    const { client } = await httpV2(await startHttpGateway(api));
    await cancels((signal) => client.callTool({ name: 'slow', arguments: { ms: 8000 } }, { signal }), api);
  });

  it('a timeout on the client side is a cancellation too', async () => {
    const api = await startToyApi();
    const { client } = await stdioV1(api);
    const pending = client
      .callTool({ name: 'slow', arguments: { ms: 10_000 } }, undefined, { timeout: 8000 })
      .catch((e: unknown) => e);
    // The call really reached the upstream before the client gave up...
    await expect.poll(() => api.app.toy.activeSlowTimers(), { timeout: 8000, interval: 5 }).toBe(1);
    expect(await pending).toBeInstanceOf(McpError);
    // ...and the gateway's cancellation stopped it there.
    await expect.poll(() => api.app.toy.slowEndedEarly(), { timeout: 15_000 }).toBe(1);
    expect(api.app.toy.activeSlowTimers()).toBe(0);
  });
});
