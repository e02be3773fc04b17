/**
 * Checks real answers against the OpenAPI document of the service that gave them, so a document
 * that drifts from the code fails the contract suites: every status must be documented for its
 * operation (or by the document's `default` error), and every JSON body must match its schema.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { expect } from 'vitest';

interface MediaType {
  schema?: object;
}
interface Operation {
  responses: Record<string, { content?: Record<string, MediaType> }>;
}
type PathItem = Record<string, Operation>;
interface Document {
  paths: Record<string, PathItem>;
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
const documents = new Map<string, Promise<Document>>();

/** The document the service at `origin` serves, fetched once per origin. */
function documentOf(origin: string): Promise<Document> {
  let document = documents.get(origin);
  if (document === undefined) {
    document = fetch(`${origin}/openapi.json`).then(async (res) => {
      if (res.status !== 200) throw new Error(`${origin}/openapi.json answered ${res.status}`);
      return (await res.json()) as Document;
    });
    documents.set(origin, document);
  }
  return document;
}

/**
 * The path item and operation for a request: the exact path first, then templates (`{id}` one
 * segment, `{path}` the rest), the first that has the method. HEAD is answered like GET.
 */
function find(document: Document, method: string, path: string): { item?: PathItem; operation?: Operation } {
  const key = method === 'HEAD' ? 'get' : method.toLowerCase();
  const items = Object.entries(document.paths).filter(([template]) => {
    const pattern = template
      .replace(/[.+?^$()|[\]\\]/g, '\\$&')
      .replace('{path}', '.*')
      .replace(/\{\w+\}/g, '[^/]+');
    return template === path || new RegExp(`^${pattern}$`).test(path);
  });
  items.sort(([a], [b]) => Number(b === path) - Number(a === path));
  const match = items.find(([, item]) => item[key] !== undefined);
  return { item: (match ?? items[0])?.[1], operation: match?.[1][key] };
}

/** Fails the test when `res` is not an answer the document of its service allows. Reads a clone of the body. */
export async function expectDocumented(method: string, url: string, res: Response): Promise<void> {
  const { origin, pathname } = new URL(url);
  const document = await documentOf(origin);
  const { item, operation } = find(document, method, pathname);
  const status = String(res.status);
  // A documented operation lists each of its statuses. An unknown path or method is the kit's 404
  // or 405, the `default` error every operation documents.
  const response =
    operation !== undefined
      ? operation.responses[status]
      : [404, 405].includes(res.status)
        ? Object.values(item ?? Object.values(document.paths)[0] ?? {})[0]?.responses.default
        : undefined;
  expect(response, `${method} ${pathname} answered ${status}, which its document does not list`).toBeDefined();
  const schema = response?.content?.['application/json']?.schema;
  if (method === 'HEAD' || res.status === 204 || schema === undefined) return;
  const body: unknown = await res.clone().json();
  const validate = ajv.compile(schema);
  expect(validate(body) ? [] : validate.errors, `${method} ${pathname} ${status}: body against its documented schema`).toEqual([]);
}

/** fetch, then expectDocumented: what the contract suites call instead of fetch. */
export async function documentedFetch(url: string, init: RequestInit = {}): Promise<Response> {
  const res = await fetch(url, init);
  await expectDocumented(init.method ?? 'GET', url, res);
  return res;
}
