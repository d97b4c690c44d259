import { describe, expect, it } from 'vitest';
import { startApi } from './support/toy-api.js';

// The lecture's exercise 5: an id in the wrong shape is refused before the route runs (400), an
// id in the right shape that names nothing is the route's own 404.
describe('documents', () => {
  it('serves doc-001', async () => {
    const api = await startApi('memory');
    const { status, body } = await api.json('/documents/doc-001');
    expect(status).toBe(200);
    expect(body).toMatchObject({ id: 'doc-001', title: 'Employee handbook' });
  });

  it('refuses an id that is not doc-NNN, saying the pattern', async () => {
    const api = await startApi('memory');
    const { status, body } = await api.json('/documents/handbook');
    expect(status).toBe(400);
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toContain('$.doc_id');
    expect(body.error.message).toContain('^doc-\\d{3}$');
  });

  it('answers 404 for a well-formed id that names no document, listing the ones that exist', async () => {
    const api = await startApi('memory');
    const { status, body } = await api.json('/documents/doc-404');
    expect(status).toBe(404);
    expect(body).toEqual({
      error: { type: 'not_found_error', message: "no document 'doc-404'; the documents are: doc-001" },
    });
  });

  it('is in the OpenAPI document as read_document', async () => {
    const api = await startApi('memory');
    const { body } = await api.json('/openapi.json');
    expect(body.paths['/documents/{doc_id}'].get.operationId).toBe('read_document');
  });
});
