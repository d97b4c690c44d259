// Tests read many JSON bodies and check them with expect(); typing each one adds noise,
// so in tests `response.json()` is `any` (as it was in older Node typings).
declare global {
  interface Response {
    // biome-ignore lint/suspicious/noExplicitAny: in tests, bodies are checked with expect(), not typed
    json(): Promise<any>;
  }
}

export {};
