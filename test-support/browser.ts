// A person's browser, as far as identity: connect needs one: it follows redirects, keeps cookies
// per origin (host and port: the authorization servers and the gateway of a test share a host),
// and signs in at the stack's authorization servers (their /interaction pages) as the demo user
// it is told, consenting to what is asked. It stops at the first page that is not a redirect.

export interface Page {
  status: number;
  url: string;
  text: string;
  /** Every URL the browser went through, the last included. */
  trail: string[];
}

export interface SignIn {
  user: string;
  password: string;
  /** At the consent page: deny instead of allowing. */
  deny?: boolean;
}

export class Browser {
  readonly #jars = new Map<string, Map<string, string>>();
  /** Who signs in at each issuer (its origin). */
  readonly #signIns: Map<string, SignIn>;

  constructor(signIns: Record<string, SignIn>) {
    this.#signIns = new Map(Object.entries(signIns).map(([issuer, who]) => [new URL(issuer).origin, who]));
  }

  /** Drops one origin's cookies, as a browser that never went there. */
  forget(origin: string): void {
    this.#jars.delete(new URL(origin).origin);
  }

  /** Follows `start`; `stopBefore`: a URL the browser does not open (the page is then empty, status 0). */
  async open(start: string, stopBefore?: (url: string) => boolean, maxSteps = 20): Promise<Page> {
    let url = start;
    const trail: string[] = [];
    for (let step = 0; step < maxSteps; step++) {
      trail.push(url);
      if (stopBefore?.(url)) return { status: 0, url, text: '', trail };
      const here = new URL(url);
      const interaction = /^\/interaction\/([^/?#]+)$/.exec(here.pathname);
      let response = await this.#send(url);
      if (interaction && response.status < 300) {
        // The page says which step it is: the sign-in form, or the consent.
        const who = this.#signIns.get(here.origin);
        if (!who) throw new Error(`no one to sign in at ${here.origin}`);
        const form = await response.text();
        const action = form.includes(`/interaction/${interaction[1]}/login`) ? 'login' : who.deny ? 'abort' : 'confirm';
        response = await this.#send(
          `${here.origin}/interaction/${interaction[1]}/${action}`,
          action === 'login' ? { login: who.user, password: who.password } : {},
        );
      }
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        await response.body?.cancel();
        url = new URL(location, url).toString();
        continue;
      }
      return { status: response.status, url, text: await response.text(), trail };
    }
    throw new Error(`more than ${maxSteps} steps: ${trail.join(' -> ')}`);
  }

  async #send(url: string, form?: Record<string, string>): Promise<Response> {
    const origin = new URL(url).origin;
    const jar = this.#jars.get(origin) ?? new Map<string, string>();
    this.#jars.set(origin, jar);
    const response = await fetch(url, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: {
        ...(jar.size > 0 ? { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } : {}),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(form ? { body: new URLSearchParams(form) } : {}),
      signal: AbortSignal.timeout(10_000),
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const at = pair.indexOf('=');
      if (at <= 0) continue;
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      if (value === '' || /max-age=0/i.test(line)) jar.delete(name);
      else jar.set(name, value);
    }
    return response;
  }
}
