/**
 * A readable API page at /docs: Swagger UI reading the service's own /openapi.json. Its files come
 * from the swagger-ui-dist package on this machine (nothing from a CDN), read from disk only when a
 * browser asks for them, so a service that nobody browses never loads them. swagger-ui-dist is an
 * optional peer of the kit: a service that serves /docs lists it in its own dependencies, so that
 * only its image carries it.
 */
import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { textAnswer } from './schemas.js';
import { sendUnchecked, type App } from './server.js';

const page = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>API</title><link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><div id="api"></div><script src="/docs/swagger-ui-bundle.js"></script><script src="/docs/init.js"></script></body>
</html>
`;
const init = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#api', deepLinking: true });\n`;
/** Swagger UI's files by media type (each is sent as UTF-8 text). */
const assets: Record<string, string> = { 'swagger-ui.css': 'text/css', 'swagger-ui-bundle.js': 'text/javascript' };
// Swagger UI styles some elements inline; everything else comes from this server.
const policy = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'";

/** swagger-ui-dist's folder, found (not loaded) when the page is added, so a service missing it fails to start, not on a click. */
function assetDir(): string {
  try {
    return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  } catch {
    throw new Error("the /docs page needs swagger-ui-dist: add it to the service's dependencies, or set serveApiDocument: false");
  }
}

export function addDocsPage(app: App): void {
  const dir = assetDir();
  // Documented with the media type each answers with; their errors are the kit's JSON ones.
  const docs = (summary: string, type: string) => ({ schema: { summary, tags: ['docs'], response: { 200: textAnswer(summary, [type]) } } });
  const utf8 = (type: string): string => `${type}; charset=utf-8`;
  app.get('/docs', docs('A readable page of this API (Swagger UI)', 'text/html'), (_r, reply) => {
    void reply.type(utf8('text/html')).header('content-security-policy', policy).send(page);
  });
  app.get('/docs/init.js', docs('Starts Swagger UI on /openapi.json', 'text/javascript'), (_r, reply) => {
    void reply.type(utf8('text/javascript')).send(init);
  });
  for (const [file, type] of Object.entries(assets)) {
    app.get(`/docs/${file}`, docs(`Swagger UI's ${file}`, type), (_r, reply) => {
      sendUnchecked(reply.type(utf8(type)).header('cache-control', 'public, max-age=86400'), createReadStream(join(dir, file)));
    });
  }
}
