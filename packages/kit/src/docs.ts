/**
 * A readable API page at /docs: Swagger UI reading the service's own /openapi.json. Its files come
 * from the swagger-ui-dist package on this machine (nothing from a CDN), read from disk only when a
 * browser asks for them, so a service that nobody browses never loads them.
 */
import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Type } from 'typebox';
import { sendUnchecked, type App } from './server.js';

const page = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>API</title><link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><div id="api"></div><script src="/docs/swagger-ui-bundle.js"></script><script src="/docs/init.js"></script></body>
</html>
`;
const init = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#api', deepLinking: true });\n`;
const assets: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
};
// Swagger UI styles some elements inline; everything else comes from this server.
const policy = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'";

const assetDir = (): string => dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

export function addDocsPage(app: App): void {
  const html = { 200: Type.String({ description: 'The page', contentMediaType: 'text/html' }) };
  app.get(
    '/docs',
    { schema: { summary: 'A readable page of this API (Swagger UI)', tags: ['docs'], produces: ['text/html'], response: html } },
    (_r, reply) => {
      void reply.type('text/html; charset=utf-8').header('content-security-policy', policy).send(page);
    },
  );
  const script = { 200: Type.String({ description: 'The file' }) };
  const asset = (summary: string) => ({ schema: { summary, tags: ['docs'], response: script } });
  app.get('/docs/init.js', asset('Starts Swagger UI on /openapi.json'), (_r, reply) => {
    void reply.type('text/javascript; charset=utf-8').send(init);
  });
  for (const [file, type] of Object.entries(assets)) {
    app.get(`/docs/${file}`, asset(`Swagger UI's ${file}`), (_r, reply) => {
      sendUnchecked(reply.type(type).header('cache-control', 'public, max-age=86400'), createReadStream(join(assetDir(), file)));
    });
  }
}
