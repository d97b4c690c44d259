// Types of the conformance fixture upstream (fixture-upstream.mjs), for the tests that start it.
export function fixtureDocument(url: string, changes?: number): Record<string, unknown>;
export function startFixtureUpstream(options?: { onChange?: () => Promise<unknown> }): Promise<{
  url: string;
  documentUrl: string;
  close(): Promise<void>;
}>;
