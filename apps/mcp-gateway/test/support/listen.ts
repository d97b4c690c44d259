// A 2026-07-28 client's subscriptions/listen: the POST that opens the stream, and the JSON-RPC
// messages read off it as they come (for listen-streams.test.ts and replicas.test.ts).

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** POSTs subscriptions/listen to `url` with this id and filter; the answer stays open. */
export function postListen(url: string, token: string, id: number | string, notifications: unknown) {
  return fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'subscriptions/listen',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'subscriptions/listen',
      params: { _meta: META, notifications },
    }),
  });
}

/** The JSON-RPC messages of an open event stream, read as they come. */
export function messagesOf(response: Response) {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const seen: Array<Record<string, any>> = [];
  let text = '';
  let pending: ReturnType<typeof reader.read> | undefined;
  return {
    seen,
    /** Reads until `count` messages have come or `ms` pass. */
    async until(count: number, ms = 5_000) {
      const deadline = Date.now() + ms;
      while (seen.length < count && Date.now() < deadline) {
        pending ??= reader.read();
        const chunk = await Promise.race([pending, new Promise<undefined>((r) => setTimeout(() => r(undefined), 100))]);
        if (chunk === undefined) continue;
        pending = undefined;
        if (chunk.done) break;
        text += new TextDecoder().decode(chunk.value);
        const lines = text.split('\n');
        text = lines.pop() ?? '';
        for (const line of lines) if (line.startsWith('data: ')) seen.push(JSON.parse(line.slice(6)));
      }
      return seen;
    },
    stop: () => reader.cancel().catch(() => undefined),
  };
}
