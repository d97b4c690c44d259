// A schema's name as it stands in a `$ref`: one token of a JSON pointer (RFC 6901: `~` as ~0,
// `/` as ~1) inside a URI fragment (RFC 3986: what a fragment may not hold percent-encoded,
// `%` itself as %25). OpenAPI asks for names of [a-zA-Z0-9._-], which need neither; hand-written
// and converted documents use spaces, `%` and other scripts, and a client's validator resolves
// the `#/$defs/...` the gateway writes by these same rules.

/** What a fragment holds as itself: unreserved characters, sub-delims, `:` and `@` (`/` separates tokens). */
const AS_ITSELF = /^[A-Za-z0-9\-._~!$&'()*+,;=:@]*$/;
const NOT_AS_ITSELF = /[^A-Za-z0-9\-._~!$&'()*+,;=:@]/gu;
/** A run of percent-encoded octets: decoded together, since a character may take several. */
const ENCODED = /(?:%[0-9A-Fa-f]{2})+/g;

export const DEFS = '#/$defs/';

/** Under the u flag, a surrogate matches only when it stands alone: half of a pair. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** Whether a name is Unicode text (no lone surrogate), so that a reference can carry it. */
export const wellFormed = (name: string) => !LONE_SURROGATE.test(name);

/** `name` as a token of a pointer in a URI fragment. */
export function pointerToken(name: string): string {
  const token = name.includes('~') || name.includes('/') ? name.replaceAll('~', '~0').replaceAll('/', '~1') : name;
  if (AS_ITSELF.test(token)) return token;
  // A lone surrogate has no UTF-8, so no reference can name it (the converter refuses such a
  // name, wellFormed below); here, for a message only, it is written as U+FFFD.
  return token.replace(NOT_AS_ITSELF, (c) => (wellFormed(c) ? encodeURIComponent(c) : '%EF%BF%BD'));
}

/**
 * The name a token stands for. A `%` that starts no percent-encoding (as in a hand-written
 * `#/components/schemas/50%`) is read as itself, as a lenient reader would; so is a run of
 * octets that is not UTF-8.
 */
export function tokenName(token: string): string {
  let name = token;
  if (name.includes('%')) {
    name = name.replace(ENCODED, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run;
      }
    });
  }
  return name.includes('~') ? name.replaceAll('~1', '/').replaceAll('~0', '~') : name;
}

/** The `$ref` to a definition the gateway keeps in a tool's `$defs`. */
export const defRef = (name: string) => `${DEFS}${pointerToken(name)}`;
/** The definition a `#/$defs/...` reference names. */
export const defName = (ref: string) => tokenName(ref.slice(DEFS.length));
