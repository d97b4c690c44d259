// The company's demo users, two employees of the toy API's Cardinal Energy with different
// roles: what each may be granted is decided here, whatever a client asks for. Their password
// comes from the environment (DEMO_PASSWORD), never from code.
import { createHash, timingSafeEqual } from 'node:crypto';

/** Every scope the stack's resources know, with what it allows (shown on the consent page). */
export const SCOPES: Readonly<Record<string, string>> = {
  'emails:read': 'read the company’s emails',
  'digest:read': 'read the weekly digest',
  'replies:write': 'send replies to emails',
  admin: 'change the API’s fault settings',
};

export interface DemoUser {
  id: string;
  name: string;
  title: string;
  /** The scopes this user may grant to a client. */
  scopes: readonly string[];
}

export const USERS: readonly DemoUser[] = [
  {
    id: 'ada',
    name: 'Ada Okafor',
    title: 'Firmware Lead (manager)',
    scopes: ['emails:read', 'digest:read', 'replies:write'],
  },
  { id: 'ben', name: 'Ben Lindqvist', title: 'Embedded Engineer (analyst)', scopes: ['emails:read', 'digest:read'] },
];

export function findUser(id: string): DemoUser | undefined {
  return USERS.find((user) => user.id === id);
}

/** The user whose login and password these are, compared in constant time; undefined: wrong. */
export function checkLogin(login: string, password: string, expected: string): DemoUser | undefined {
  const user = findUser(login.trim().toLowerCase());
  const digest = (text: string) => createHash('sha256').update(text).digest();
  const passwordOk = timingSafeEqual(digest(password), digest(expected));
  return user && passwordOk ? user : undefined;
}
