// Choosing which operations become tools: include and exclude rules by operationId glob, tag,
// method and path glob, and the read-only switch, on a small document that has one of each.
import { describe, expect, it } from 'vitest';
import { openApiToTools } from '../src/openapi/openapi-to-tools.js';
import { parseSelectors, SelectionError, selectTools } from '../src/tools/selection.js';

const ok = { '200': { description: 'ok' } };
const id = [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }];
const loaded = openApiToTools({
  openapi: '3.1.0',
  info: { title: 'Shop', version: '1' },
  paths: {
    '/orders': {
      get: { operationId: 'orders/list', tags: ['Orders'], responses: ok },
      post: { operationId: 'orders/create', tags: ['Orders'], responses: ok },
    },
    '/orders/{id}': {
      parameters: id,
      delete: { operationId: 'orders/delete', tags: ['Orders', 'danger'], responses: ok },
    },
    '/orders/{id}/preview': {
      parameters: id,
      // A POST that changes nothing, and says so.
      post: {
        operationId: 'orders/preview',
        tags: ['Orders'],
        'x-mcp': { annotations: { readOnlyHint: true } },
        responses: ok,
      },
    },
    '/admin/users': { get: { operationId: 'admin/users', tags: ['admin'], responses: ok } },
    '/health': { head: { responses: ok } },
  },
});
const tools = loaded.tools;

const names = (include: string, exclude = '', readOnly = false) =>
  selectTools(tools, {
    include: parseSelectors(include, 'TOOLS_INCLUDE'),
    exclude: parseSelectors(exclude, 'TOOLS_EXCLUDE'),
    readOnly,
  }).kept.map((t) => t.source.operationId ?? t.name);

describe('tool selection', () => {
  it('keeps everything when no rule is set', () => {
    expect(loaded.problems).toEqual([]);
    expect(names('')).toHaveLength(6);
  });

  it('includes by operationId glob (* stays within a / segment, ** crosses it), tag (any case), method and path glob', () => {
    expect(names('op:orders/*')).toEqual(['orders/list', 'orders/create', 'orders/delete', 'orders/preview']);
    expect(names('op:orders*')).toEqual([]);
    expect(names('op:**')).toHaveLength(5); // the HEAD /health has no operationId
    expect(names('tag:orders')).toHaveLength(4);
    expect(names('tag:DANGER')).toEqual(['orders/delete']);
    expect(names('method:get')).toEqual(['orders/list', 'admin/users']);
    expect(names('path:/orders/*')).toEqual(['orders/delete']);
    expect(names('path:/orders/**')).toEqual(['orders/list', 'orders/create', 'orders/delete', 'orders/preview']);
    // Several rules: a tool matching any of them is kept.
    expect(names('tag:admin,method:DELETE')).toEqual(['orders/delete', 'admin/users']);
  });

  it('then excludes, and says which rule left each out', () => {
    const report = selectTools(tools, {
      include: parseSelectors('tag:orders', 'TOOLS_INCLUDE'),
      exclude: parseSelectors('method:DELETE,op:*/create', 'TOOLS_EXCLUDE'),
      readOnly: false,
    });
    expect(report.kept.map((t) => t.source.operationId)).toEqual(['orders/list', 'orders/preview']);
    expect(report.leftOut).toEqual([
      { reason: 'excluded by op:*/create', count: 1 },
      { reason: 'excluded by method:DELETE', count: 1 },
      { reason: 'matched no include rule', count: 2 },
    ]);
    expect(report.summary).toBe(
      'kept 2 of 6 tools; left out 1 excluded by op:*/create, 1 excluded by method:DELETE, 2 matched no include rule',
    );
  });

  it('read-only keeps safe methods and operations the document marks read-only', () => {
    expect(names('', '', true)).toEqual(['orders/list', 'orders/preview', 'admin/users', 'head_health']);
    expect(selectTools(tools, { include: [], exclude: [], readOnly: true }).summary).toBe(
      'kept 4 of 6 tools; left out 2 not read-only',
    );
  });

  it('refuses a rule it cannot read, naming the setting and what is allowed', () => {
    const allowed =
      'write op:<operationId glob>, tag:<tag>, method:<HTTP method> or path:<path glob>, comma-separated (e.g. tag:issues,op:repos/get*)';
    expect(() => parseSelectors('issues', 'TOOLS_INCLUDE')).toThrow(
      new SelectionError(`TOOLS_INCLUDE: 'issues' is not a rule; ${allowed}`),
    );
    expect(() => parseSelectors('tag:', '--exclude')).toThrow(`--exclude: 'tag:' is not a rule; ${allowed}`);
    expect(() => parseSelectors('label:x', 'TOOLS_INCLUDE')).toThrow("TOOLS_INCLUDE: 'label:x' is not a rule");
    expect(() => parseSelectors('method:FETCH', 'TOOLS_EXCLUDE')).toThrow(
      "TOOLS_EXCLUDE: 'method:FETCH' names no HTTP method; use one of GET, PUT, POST, DELETE, OPTIONS, HEAD, PATCH, TRACE",
    );
    // Spaces and empty items are forgiven.
    expect(parseSelectors(' tag:a , ,op:b ', 'TOOLS_INCLUDE').map((s) => s.text)).toEqual(['tag:a', 'op:b']);
  });
});
