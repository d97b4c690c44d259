// Loads the OpenAPI document from a URL or a file, as JSON or YAML.
import { readFile } from 'node:fs/promises';
import type { HttpClient } from '@agentwire/http-client';

export class SpecLoadError extends Error {
  override readonly name = 'SpecLoadError';
}

async function parseDocument(text: string, where: string): Promise<unknown> {
  try {
    return JSON.parse(text);
  } catch {
    try {
      // Loaded only for YAML documents, to keep start-up fast for JSON ones.
      const { parse: parseYaml } = await import('yaml');
      return parseYaml(text);
    } catch (error) {
      throw new SpecLoadError(`${where} is neither JSON nor YAML: ${(error as Error).message}`);
    }
  }
}

/**
 * @param source an http(s) URL or a file path
 * @param headers sent with a URL fetch (the upstream key, when the document lives upstream)
 */
export async function loadSpec(
  source: string,
  client: HttpClient,
  headers: Record<string, string> = {},
): Promise<unknown> {
  if (/^https?:\/\//i.test(source)) {
    try {
      const response = await client.fetch(source, {
        headers: { accept: 'application/json, application/yaml;q=0.9, */*;q=0.1', ...headers },
      });
      if (!response.ok)
        throw new SpecLoadError(`fetching the OpenAPI document from ${source} answered HTTP ${response.status}`);
      return parseDocument(await response.text(), source);
    } catch (error) {
      if (error instanceof SpecLoadError) throw error;
      throw new SpecLoadError(`cannot fetch the OpenAPI document from ${source}: ${(error as Error).message}`);
    }
  }
  let text: string;
  try {
    text = await readFile(source, 'utf8');
  } catch (error) {
    throw new SpecLoadError(`cannot read the OpenAPI document ${source}: ${(error as Error).message}`);
  }
  return parseDocument(text, source);
}
