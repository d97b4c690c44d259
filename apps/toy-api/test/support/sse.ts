// Reads a server-sent event stream with eventsource-parser, keeping comments (heartbeats),
// the retry field and whether the stream ended cleanly or was cut.
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface ReadStream {
  events: EventSourceMessage[];
  comments: string[];
  retry: number | undefined;
  /** The error that ended the stream, when it did not end cleanly. */
  cut: Error | undefined;
}

export async function readEventStream(response: Response): Promise<ReadStream> {
  const result: ReadStream = { events: [], comments: [], retry: undefined, cut: undefined };
  const parser = createParser({
    onEvent: (event) => result.events.push(event),
    onComment: (comment) => result.comments.push(comment),
    onRetry: (retry) => {
      result.retry = retry;
    },
  });
  const decoder = new TextDecoder();
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      parser.feed(decoder.decode(chunk, { stream: true }));
    }
  } catch (error) {
    result.cut = error as Error;
  }
  return result;
}
