// The conformance fixture upstream (conformance/fixture-upstream.mjs) through the gateway, with
// the official v1 client: each kind of answer a REST API gives becomes the content the suite's
// fixture tools promise. The suite itself runs on it in CI (scripts/conformance.mjs).
import { describe, expect, it } from 'vitest';
import { startFixtureUpstream } from '../conformance/fixture-upstream.mjs';
import { httpV1, onCleanup, startHttpGatewayFor } from './support/stack.js';

async function fixtureGateway() {
  let gateway: { reload: (why: string) => Promise<unknown> } | undefined;
  const fixture = await startFixtureUpstream({ onChange: async () => gateway?.reload('fixture') });
  onCleanup(() => fixture.close());
  const gw = await startHttpGatewayFor({ upstreamUrl: fixture.url, openapi: fixture.documentUrl });
  gateway = gw.gateway;
  return gw;
}

describe('the conformance fixture upstream through the gateway', () => {
  it('gives text, an image, audio, an embedded resource and an error, as the suite names them', async () => {
    const { client } = await httpV1(await fixtureGateway());
    const call = (name: string) =>
      client.callTool({ name, arguments: {} }) as Promise<{ content: any[]; isError?: boolean }>;
    expect((await call('test_simple_text')).content[0]).toMatchObject({
      type: 'text',
      text: expect.stringMatching(/simple text/),
    });
    expect((await call('test_image_content')).content[0]).toMatchObject({ type: 'image', mimeType: 'image/png' });
    const audio = (await call('test_audio_content')).content[0];
    expect(audio).toMatchObject({ type: 'audio', mimeType: 'audio/wav' });
    expect(Buffer.from(audio.data, 'base64').subarray(0, 4).toString()).toBe('RIFF');
    expect((await call('test_embedded_resource')).content[0]).toMatchObject({
      type: 'resource',
      resource: { mimeType: 'application/octet-stream', blob: Buffer.from('fixture bytes\n').toString('base64') },
    });
    const error = await call('test_error_handling');
    expect(error.isError).toBe(true);
    expect(error.content[0].text).toMatch(/always fails/);
  });

  it('gives audio as an embedded resource to a 2024-11-05 client, whose revision has no audio content', async () => {
    const { client } = await httpV1(await fixtureGateway(), '2024-11-05');
    const result = (await client.callTool({ name: 'test_audio_content', arguments: {} })) as { content: any[] };
    expect(result.content[0]).toMatchObject({ type: 'resource', resource: { mimeType: 'audio/wav' } });
  });

  it('changes its tool list when its trigger is called, and the gateway serves the new list', async () => {
    const { client } = await httpV1(await fixtureGateway());
    const names = async () => (await client.listTools()).tools.map((t) => t.name);
    expect(await names()).not.toContain('test_added_tool_1');
    await client.callTool({ name: 'test_trigger_tool_change', arguments: {} });
    expect(await names()).toContain('test_added_tool_1');
  });
});
