import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { errorAnswer } from '@sample-services/kit/schemas';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { loadPageFiles, type PageFiles, type StaticFile } from './page-files.js';

/** A 200 answer of text in one of `types`, documented as such: the kit's errors on the same route stay JSON. */
const textAnswer = (description: string, types: readonly string[]) => ({
  description,
  content: Object.fromEntries(types.map((type) => [type, { schema: Type.String() }])),
});

/**
 * Scripts, styles, images and fetches from this origin only, nothing inline, no plugins, no
 * framing, no <base>, no form posts; and Trusted Types, so that the browser itself refuses any
 * string written as HTML (innerHTML and the like) and only text reaches the table.
 */
export const contentSecurityPolicy =
  "default-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'; " +
  "require-trusted-types-for 'script'; trusted-types 'none'";

const securityHeaders = {
  'content-security-policy': contentSecurityPolicy,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
};

/** The page's URL never changes, so it is revalidated on every use (a 304 while unchanged). */
const pageCaching = 'no-cache';
/** An asset's URL names its build, so what is at a URL never changes. */
const assetCaching = 'public, max-age=31536000, immutable';

/** If-None-Match names `etag` (or is `*`); compared weakly, as RFC 9110 says for this header. */
function stillFresh(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}

function sendFile(request: FastifyRequest, reply: FastifyReply, file: StaticFile, caching: string): void {
  void reply.headers({ ...securityHeaders, 'cache-control': caching, etag: file.etag });
  if (stillFresh(request.headers['if-none-match'], file.etag)) void reply.code(304).send();
  else void reply.type(file.contentType).send(file.body);
}

const notModified = Type.Null({ description: 'Not modified: If-None-Match names the current ETag; no body' });

/**
 * GET /: the users page for people, and GET /assets/<build>/<file>: its stylesheet, icon and
 * script modules. Every answer carries a strong ETag and the security headers.
 */
export function pageRoutes(files: PageFiles = loadPageFiles()): FastifyPluginCallbackTypebox {
  return (app, _options, done) => {
    const page = {
      summary: 'The users page: the list of /api/users as a table, for people',
      tags: ['page'],
      response: { 200: textAnswer('The page', ['text/html']), 304: notModified },
    };
    app.get('/', { schema: page }, (request, reply) => {
      sendFile(request, reply, files.page, pageCaching);
    });

    const asset = {
      summary: "A file of the users page: its script modules, stylesheet or icon, under the build's own path",
      tags: ['page'],
      // Exactly what is served: the running build and its files (another build or file is a 404).
      params: Type.Object({
        build: Type.String({ description: 'The build the page names', enum: [files.build] }),
        file: Type.String({ description: 'The file', enum: [...files.assets.keys()] }),
      }),
      response: {
        200: textAnswer('The file', ['text/javascript', 'text/css', 'image/svg+xml']),
        304: notModified,
        404: errorAnswer('No such file in the running build', 'Not found: GET /assets/0/main.js'),
      },
    };
    // Another build or file fails the params' check, and is answered with the kit's 404 for an unknown path, not a 400.
    app.get('/assets/:build/:file', { schema: asset, attachValidation: true }, (request, reply) => {
      const file = request.validationError === undefined ? files.assets.get(request.params.file) : undefined;
      // As the kit's not-found handler answers an unknown path.
      if (file === undefined) void reply.code(404).send({ error: `Not found: ${request.method} ${request.url.split('?')[0]}` });
      else sendFile(request, reply, file, assetCaching);
    });
    done();
  };
}
