/**
 * Variant A as the original sample served it: an Express app with the cors middleware and the
 * JSON body parser, answering the three routes with res.json (Express 5, its defaults: ETag and
 * X-Powered-By included). Issue 42 holds variant A to a multiple of its req/s on each route.
 */
import { hostname } from 'node:os';
import cors from 'cors';
import express from 'express';

// Read once, as variant A and the other baselines do: a per-request os.hostname() would load Express alone.
const host = hostname();
const app = express();
app.use(cors());
app.use(express.json());

app.get('/', (_request, response) => {
  response.json({ message: 'Hello from Docker!', timestamp: new Date().toISOString(), hostname: host });
});

app.get('/health', (_request, response) => {
  response.json({ status: 'healthy', uptime: process.uptime(), environment: process.env.NODE_ENV });
});

app.get('/api/users', (_request, response) => {
  response.json([
    { id: 1, name: 'John Doe', email: 'john@example.com' },
    { id: 2, name: 'Jane Smith', email: 'jane@example.com' },
  ]);
});

const server = app.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '0.0.0.0', () => {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  // The original logged `Server running on port <port>`; the bench reads the port from a JSON line.
  process.stdout.write(`${JSON.stringify({ port, msg: `Server running on port ${port}` })}\n`);
});

process.once('SIGTERM', () => process.exit(0));
