// search_operations' ranking on a real document (GitHub's, 1,223 operations) and on the shapes
// other documents have: names in camelCase with no title (Kubernetes), descriptions in HTML
// (Stripe), descriptions that only repeat the method and path (Twilio). Its quality over 377
// tasks is the retrieval benchmark's (pnpm retrieval), which CI holds to its committed numbers.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { countTokens } from '@agentwire/tool-tokens';
import { describe, expect, it } from 'vitest';
import { openApiToTools } from '../src/openapi/openapi-to-tools.js';
import { OperationIndex, splitWords } from '../src/tools/operation-search.js';
import type { Tool } from '../src/tools/tool.js';

const GITHUB = fileURLToPath(
  new URL('../node_modules/@octokit/openapi/generated/api.github.com.json', import.meta.url),
);
const github = openApiToTools(JSON.parse(readFileSync(GITHUB, 'utf8'))).tools;
const index = new OperationIndex(github);
const names = (query: string, limit = 5) => index.search(query, limit).map((h) => h.name);

/** A document with the shapes of the directory's specs, written here so each case is plain. */
function toolsOf(paths: Record<string, unknown>): Tool[] {
  return openApiToTools({ openapi: '3.0.3', info: { title: 'Shapes', version: '1' }, paths }).tools;
}

describe('search_operations', () => {
  it('splits the words specs run together and leaves markup out', () => {
    expect(splitWords('listCoreV1NamespacedPod')).toEqual(['list', 'core', 'v1', 'namespaced', 'pod']);
    expect(splitWords('conversations_setPurpose')).toEqual(['conversations', 'set', 'purpose']);
    expect(splitWords('HTTPRoute')).toEqual(['http', 'route']);
    expect(splitWords('<p>Creates a <a href="/docs/refunds">refund</a>.</p>')).toEqual(['creates', 'a', 'refund']);
    expect(splitWords('See [the docs](https://docs.github.com/rest) now')).toEqual(['see', 'the', 'docs', 'now']);
  });

  it('finds what people ask for in their own words, not only in the summary’s', () => {
    // "PR" is a pull request, "ticket" an issue, "open" and "file" mean create.
    expect(names('open a PR')).toContain('pulls_create');
    expect(names('file a ticket')).toContain('issues_create');
    // The operation's own words still rank it first.
    expect(names('create an issue', 1)).toEqual(['issues_create']);
    // A verb of removal ranks DELETE operations higher than ones that only share the nouns.
    expect(index.search('delete a label from an issue', 3)[0]?.method).toBe('DELETE');
  });

  it('gives each hit its title and the first sentence of its description, in few tokens', () => {
    const hits = index.search('open a PR', 8);
    const create = hits.find((h) => h.name === 'pulls_create');
    expect(create).toMatchObject({
      method: 'POST',
      path: '/repos/{owner}/{repo}/pulls',
      title: 'Create a pull request',
    });
    expect(create?.summary).toMatch(/^Draft pull requests are available/);
    for (const hit of hits) expect(hit.summary?.length ?? 0).toBeLessThanOrEqual(121);
    // Eight hits with all that stay small next to one full tool description.
    expect(countTokens(JSON.stringify(hits))).toBeLessThan(600);
  });

  it('reads names without titles, HTML descriptions, and leaves out descriptions that only repeat the path', () => {
    const tools = toolsOf({
      '/api/v1/namespaces/{namespace}/pods': {
        parameters: [{ name: 'namespace', in: 'path', required: true, schema: { type: 'string' } }],
        post: { operationId: 'createCoreV1NamespacedPod', responses: { 201: { description: 'Created' } } },
        get: { operationId: 'listCoreV1NamespacedPod', responses: { 200: { description: 'OK' } } },
      },
      '/v1/refunds': {
        post: {
          operationId: 'PostRefunds',
          description:
            '<p>When you create a new <a href="/docs/api/refunds">refund</a>, you must specify a charge.</p>',
          responses: { 200: { description: 'OK' } },
        },
      },
      '/2010-04-01/Accounts/{AccountSid}/Calls.json': {
        parameters: [{ name: 'AccountSid', in: 'path', required: true, schema: { type: 'string' } }],
        post: {
          operationId: 'CreateCall',
          description: 'POST /2010-04-01/Accounts/{AccountSid}/Calls.json',
          responses: { 201: { description: 'Created' } },
        },
      },
    });
    const shapes = new OperationIndex(tools);
    expect(shapes.search('list pods', 1)[0]?.name).toBe('listCoreV1NamespacedPod');
    expect(shapes.search('run a new pod', 1)[0]?.name).toBe('createCoreV1NamespacedPod');
    const refund = shapes.search('give a customer their money back', 1)[0];
    expect(refund).toMatchObject({
      name: 'PostRefunds',
      summary: 'When you create a new refund, you must specify a charge.',
    });
    const call = shapes.search('ring a customer', 1)[0];
    expect(call?.name).toBe('CreateCall');
    expect(call).not.toHaveProperty('summary');
  });

  it('reads past the values in a request: quoted names, addresses, keys, numbers', () => {
    // "release" in quotes is a value, not what to do; with it read as a word, release
    // operations outrank the label one.
    expect(names('add the label "release" to issue #42 in octo/app', 3)).toContain('issues_add-labels');
    expect(names('invite someone@example.com to the org')).toContain('orgs_create-invitation');
    expect(index.search('the of a to 42 "x"')).toEqual([]);
  });

  it('ranks a broad operation over a narrow one that shares its words', () => {
    // Both have the words "fork" and "repository" in their titles; the one whose name takes
    // eight words to say what it does is the narrower.
    const tools = toolsOf({
      '/repos/{repo}/fork-pr-settings': {
        parameters: [{ name: 'repo', in: 'path', required: true, schema: { type: 'string' } }],
        put: {
          operationId: 'set-private-repo-fork-pr-workflows-settings-repository',
          summary: 'Set the fork pull request workflow settings of a repository',
          responses: { '204': { description: 'Done' } },
        },
      },
      '/repos/{repo}/forks': {
        parameters: [{ name: 'repo', in: 'path', required: true, schema: { type: 'string' } }],
        post: {
          operationId: 'create-fork',
          summary: 'Fork a repository',
          responses: { '202': { description: 'Accepted' } },
        },
      },
    });
    const hits = new OperationIndex(tools).search('set up a fork of this repository', 2).map((h) => h.name);
    expect(hits).toEqual(['create-fork', 'set-private-repo-fork-pr-workflows-settings-repository']);
    // On GitHub's 1,223 operations, the five hits for forking were all Actions settings of forks.
    expect(names('fork a repository').filter((n) => n.startsWith('actions_'))).toEqual([]);
  });

  it("reads what an operation's arguments say they are, one sentence each", () => {
    // Two node patches alike in name and path; only one argument's description says what
    // cordoning is about, and only its first sentence is read.
    const body = (description: string) => ({
      content: {
        'application/json': {
          schema: {
            type: 'object',
            properties: { spec: { type: 'object', description } },
          },
        },
      },
    });
    const tools = toolsOf({
      '/nodes/{name}': {
        parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string' } }],
        patch: {
          operationId: 'patchNode',
          requestBody: body('Unschedulable controls node schedulability of new pods.'),
          responses: { '200': { description: 'OK' } },
        },
      },
      '/nodes/{name}/status': {
        parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string' } }],
        patch: {
          operationId: 'patchNodeStatus',
          requestBody: body('Conditions observed on the node. Schedulability of new pods follows them.'),
          responses: { '200': { description: 'OK' } },
        },
      },
    });
    // Nothing else in either operation says "schedulability"; the status patch says it only
    // in its second sentence.
    expect(new OperationIndex(tools).search('schedulability', 5).map((h) => h.name)).toEqual(['patchNode']);
  });

  it('answers a query of nothing but stop words with no hits rather than everything', () => {
    expect(index.search('the of a to')).toEqual([]);
  });
});

describe('browsing by group', () => {
  it("groups by each operation's first tag, else the first literal segment of its path", () => {
    const ok = { '200': { description: 'ok' } };
    const param = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string' } });
    const { tools } = openApiToTools({
      openapi: '3.1.0',
      info: { title: 'G', version: '1' },
      paths: {
        '/pets': { get: { operationId: 'listPets', tags: ['animals', 'store'], responses: ok } },
        '/pets/{id}': {
          delete: { operationId: 'deletePet', tags: ['animals'], parameters: [param('id')], responses: ok },
        },
        '/{org}/invoices': {
          get: { operationId: 'listInvoices', summary: 'List invoices', parameters: [param('org')], responses: ok },
        },
        '/{org}': { get: { operationId: 'getOrg', parameters: [param('org')], responses: ok } },
        '/v1/customers': { post: { operationId: 'PostCustomers', responses: ok } },
      },
    });
    const index = new OperationIndex(tools);
    expect(index.groups()).toEqual([
      { name: 'animals', operations: 2, examples: ['listPets', 'deletePet'] },
      { name: 'invoices', operations: 1, examples: ['List invoices'] },
      { name: 'other', operations: 1, examples: ['getOrg'] },
      // A version segment names no group: Stripe's untagged /v1/customers is "customers".
      { name: 'customers', operations: 1, examples: ['PostCustomers'] },
    ]);
    // Only what the caller may call is counted, listed or found.
    const noDelete = (t: Tool) => t.binding.method !== 'DELETE';
    expect(index.groups(noDelete)[0]).toEqual({ name: 'animals', operations: 1, examples: ['listPets'] });
    expect(index.inGroup('animals', 1)).toEqual({ hits: [expect.objectContaining({ name: 'listPets' })], total: 2 });
    expect(index.inGroup('animals', 5, noDelete)?.total).toBe(1);
    expect(index.inGroup('nothing')).toBeUndefined();
    expect(index.search('delete pet', 5, undefined, 'invoices')).toEqual([]);
    expect(index.search('delete pet', 5, undefined, 'animals')[0]?.name).toBe('deletePet');
  });

  it("GitHub's spec browses in a bounded number of groups, each its tag", () => {
    const groups = new OperationIndex(github).groups();
    expect(groups.length).toBeGreaterThan(10);
    expect(groups.length).toBeLessThanOrEqual(100);
    expect(groups.find((g) => g.name === 'pulls')?.operations).toBeGreaterThan(20);
  });
});
