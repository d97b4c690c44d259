// A tool call's request body as bytes, in the media type its binding chose: JSON, a
// URL-encoded form, a multipart form (files given as base64), text, or bytes (base64). Decoded
// bytes are counted against a limit, so one call cannot make the gateway hold a huge upload.
import { queryPairs } from '../openapi/parameter-styles.js';
import type { BodyBinding } from '../tools/tool.js';

export const DEFAULT_MAX_UPLOAD_BYTES = 10 * 1024 * 1024;

/** A body the arguments cannot make (bad base64, over the limit): the caller's mistake. */
export class BodyError extends Error {
  override readonly name = 'BodyError';
}

export type EncodedBody = { json: unknown } | { body: { bytes: Uint8Array; contentType: string } } | undefined;

interface FileArgument {
  data: string;
  filename?: string;
  mediaType?: string;
}

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

export async function encodeBody(
  binding: BodyBinding,
  args: Record<string, unknown>,
  maxUploadBytes: number,
): Promise<EncodedBody> {
  let value: unknown;
  if (binding.mode === 'merged') {
    const object: Record<string, unknown> = {};
    for (const prop of binding.props) if (args[prop.arg] !== undefined) object[prop.name] = args[prop.arg];
    if (binding.required || Object.keys(object).length > 0) value = object;
  } else {
    value = args[binding.arg];
  }
  if (value === undefined) return undefined;
  if (binding.encoding === 'json') {
    // A JSON type of its own (`application/merge-patch+json`) goes as that type: Kubernetes
    // answers 415 to a patch sent as plain application/json.
    const type = binding.mediaType.split(';')[0]?.trim().toLowerCase();
    if (type === 'application/json' || binding.mediaType.includes('*')) return { json: value };
    return { body: { bytes: Buffer.from(JSON.stringify(value)), contentType: binding.mediaType } };
  }

  let uploaded = 0;
  const decode = (what: string, data: unknown): Buffer => {
    const text = typeof data === 'string' ? data.replace(/\s+/g, '') : '';
    if (typeof data !== 'string' || !BASE64.test(text)) throw new BodyError(`${what} must be base64 text`);
    const bytes = Buffer.from(text, text.includes('-') || text.includes('_') ? 'base64url' : 'base64');
    uploaded += bytes.length;
    if (uploaded > maxUploadBytes) {
      throw new BodyError(
        `${what} brings the upload to ${uploaded} bytes decoded; the limit is ${maxUploadBytes} (MAX_UPLOAD_BYTES)`,
      );
    }
    return bytes;
  };
  const mediaType = binding.mediaType.includes('*') ? 'application/octet-stream' : binding.mediaType;
  const send = (bytes: Uint8Array, contentType: string) => ({ body: { bytes, contentType } });

  switch (binding.encoding) {
    case 'text':
      return send(Buffer.from(String(value), 'utf8'), mediaType);
    case 'binary':
      return send(decode('body', value), mediaType);
    case 'form': {
      const form = new URLSearchParams();
      for (const [name, v] of entriesOf(value)) {
        for (const [key, text] of queryPairs({ in: 'query', name, style: 'form', explode: true }, v)) {
          form.append(key, text);
        }
      }
      return send(Buffer.from(form.toString()), 'application/x-www-form-urlencoded');
    }
    case 'multipart': {
      const form = new FormData();
      for (const [name, v] of entriesOf(value)) {
        const file = binding.files?.[name];
        if (file) {
          for (const [i, f] of (file.many && Array.isArray(v) ? v : [v]).entries()) {
            const arg = f as FileArgument;
            const bytes = decode(`file ${name}${file.many ? `[${i}]` : ''}`, arg?.data);
            const type = arg.mediaType ?? 'application/octet-stream';
            form.append(name, new Blob([bytes], { type }), arg.filename ?? name);
          }
        } else if (Array.isArray(v) && v.every((item) => typeof item !== 'object' || item === null)) {
          for (const item of v) form.append(name, String(item));
        } else if (typeof v === 'object' && v !== null) {
          form.append(name, new Blob([JSON.stringify(v)], { type: 'application/json' }));
        } else {
          form.append(name, String(v));
        }
      }
      // The boundary is chosen by the encoder and named in its Content-Type.
      const encoded = new Response(form);
      return send(
        Buffer.from(await encoded.arrayBuffer()),
        encoded.headers.get('content-type') ?? 'multipart/form-data',
      );
    }
  }
}

function entriesOf(value: unknown): Array<[string, unknown]> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new BodyError('the body must be an object of fields for a form');
  }
  return Object.entries(value).filter(([, v]) => v !== undefined);
}
