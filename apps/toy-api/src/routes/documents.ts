// Company documents. Only doc-001 exists: an id in the right shape can still name nothing,
// which is the lecture's exercise on the two kinds of errors (a bad id is refused before the
// route runs, a missing one is a 404 from the route itself).
import { CompanyDocument, DocumentId } from '@agentwire/schemas';
import Type from 'typebox';
import { DOCUMENTS, findDocument } from '../data/company.js';
import { EnvelopeError } from '../envelope-error.js';
import { type App, errorResponses } from '../route-context.js';

const IdParams = Type.Object({ doc_id: DocumentId }, { additionalProperties: false });

export async function documentRoutes(app: App): Promise<void> {
  app.get(
    '/documents/:doc_id',
    {
      schema: {
        operationId: 'read_document',
        summary: 'Read one document',
        description: "Returns one company document by id ('doc-001'): its title, last change and text.",
        tags: ['documents'],
        params: IdParams,
        response: { 200: CompanyDocument, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => {
      const document = findDocument(request.params.doc_id);
      if (!document) {
        const known = DOCUMENTS.map((d) => d.id).join(', ');
        throw new EnvelopeError(
          'not_found_error',
          `no document '${request.params.doc_id}'; the documents are: ${known}`,
        );
      }
      return document;
    },
  );
}
