// A whole response body as the caller gets it: JSON parsed (and checked against the call's
// schema, compiled once per schema), text types as text, anything else as bytes.
import { compileValidator, type Validate } from '@agentwire/schemas/validation';
import type { TSchema } from 'typebox';
import type { Buffered } from './attempt.js';
import type { Call } from './call.js';
import { hasDuplicateKeys } from './duplicate-keys.js';
import { InvalidResponseError } from './errors/local-errors.js';
import { firstHeader } from './headers.js';
import type { Scrubber } from './scrubber.js';

/** Media types read as text: text/*, JSON and XML (with their +json/+xml kin), scripts, forms, YAML. */
const TEXTUAL =
  /^\s*(text\/|application\/([\w.-]+\+)?(json|xml)\b|application\/(javascript|ecmascript|x-www-form-urlencoded|(x-)?yaml|graphql|x-ndjson|jsonl)\b)/i;

/** A body as the caller gets it, and its text when it was read as text (JSON included). */
export interface ParsedBody {
  data: unknown;
  text: string | undefined;
  /** The body's bytes, when `text` is their UTF-8 decoding unchanged (HttpResponse.bytes). */
  bytes?: Buffer | undefined;
}

export class ResponseBodies {
  readonly #validators = new WeakMap<object, Validate<unknown>>();

  parse(call: Call, sent: Buffered, schema: TSchema | undefined, scrubber: Scrubber): ParsedBody {
    if (sent.buffer.length === 0) return { data: undefined, text: undefined };
    const type = firstHeader(sent.headers, 'content-type') ?? '';
    // Text as a string, JSON parsed; every other type (images, archives, spreadsheets, ...) as bytes.
    if (type !== '' && !TEXTUAL.test(type)) return { data: sent.buffer, text: undefined };
    const text = sent.buffer.toString('utf8');
    if (!type.includes('json')) return { data: text, text };
    // A byte order mark is not JSON, and a parser may ignore it (RFC 8259, 8.1): some servers send
    // one. Only U+FEFF's own three bytes decode to it, so the bytes lose the same three.
    if (text.charCodeAt(0) === 0xfeff)
      return this.#json(call, sent, text.slice(1), sent.buffer.subarray(3), schema, scrubber);
    return this.#json(call, sent, text, sent.buffer, schema, scrubber);
  }

  #json(
    call: Call,
    sent: Buffered,
    text: string,
    bytes: Buffer,
    schema: TSchema | undefined,
    scrubber: Scrubber,
  ): ParsedBody {
    let data: unknown;
    const fail = (message: string, cause?: unknown) =>
      new InvalidResponseError(message, {
        method: call.method,
        path: call.path,
        status: sent.status,
        requestId: firstHeader(sent.headers, 'request-id'),
        ...(cause === undefined ? {} : { cause }),
      });
    try {
      data = JSON.parse(text);
    } catch (cause) {
      throw fail(`the ${sent.status} response is not valid JSON`, cause);
    }
    // A secret hidden by a JSON escape is out of the parsed value, and of the text, too.
    let clean: { text: string; value: unknown };
    try {
      clean = scrubber.json(text, data);
    } catch (cause) {
      // Too deep to write out again: failing is the only way not to pass the secret on.
      throw fail(
        `the ${sent.status} response holds a secret of the client's in escaped form and could not be cleaned`,
        cause,
      );
    }
    // One meaning only: a key written twice is handed on as the value that was checked, written
    // again, not as the server's text (which other parsers read with the first value).
    // Text cleaned of a secret was written by JSON.stringify, which writes no key twice.
    const handedOn =
      clean.text === text && hasDuplicateKeys(text, clean.value) ? JSON.stringify(clean.value) : clean.text;
    const checked = this.#validated(call, sent, clean.value, schema);
    // The bytes go with the text only when it is their decoding unchanged. Whether they are valid
    // UTF-8 is left to the caller that sends them (see HttpResponse.bytes): most never do.
    return handedOn === text ? { data: checked, text, bytes } : { data: checked, text: handedOn };
  }

  #validated(call: Call, sent: Buffered, data: unknown, schema: TSchema | undefined): unknown {
    if (!schema) return data;
    let validate = this.#validators.get(schema);
    if (!validate) {
      validate = compileValidator(schema);
      this.#validators.set(schema, validate);
    }
    const result = validate(data);
    if (!result.ok) {
      throw new InvalidResponseError(`the response does not match its schema:\n${result.errors.join('\n')}`, {
        method: call.method,
        path: call.path,
        status: sent.status,
        requestId: firstHeader(sent.headers, 'request-id'),
      });
    }
    return result.value;
  }
}
