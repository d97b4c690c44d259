import { describe, expect, it } from 'vitest';
import { redactUrl } from '../src/log-redaction.js';

describe('redactUrl', () => {
  it('replaces the value of every credential parameter, and leaves the rest as it was', () => {
    expect(redactUrl('/mcp?access_token=eyJ.abc.def&x=1')).toBe('/mcp?access_token=[Redacted]&x=1');
    expect(redactUrl('/a?x=1&ACCESS_TOKEN=t&refresh_token=r#f')).toBe(
      '/a?x=1&ACCESS_TOKEN=[Redacted]&refresh_token=[Redacted]#f',
    );
    expect(redactUrl('/a?my_access_token=keep')).toBe('/a?my_access_token=keep');
    expect(redactUrl('/emails?limit=1')).toBe('/emails?limit=1');
    // A sign-in coming back (the gateway's /connect/... pages): its code and state.
    expect(redactUrl('/connect/callback?code=c0de&state=s7&iss=https%3A%2F%2Fa')).toBe(
      '/connect/callback?code=[Redacted]&state=[Redacted]&iss=https%3A%2F%2Fa',
    );
    expect(redactUrl('/a?postcode=1')).toBe('/a?postcode=1');
  });
});
