import { tracingChannel } from 'node:diagnostics_channel';
import { context, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import {
  ATTR_DB_COLLECTION_NAME,
  ATTR_DB_OPERATION_NAME,
  ATTR_DB_QUERY_SUMMARY,
  ATTR_DB_SYSTEM_NAME,
  ATTR_ERROR_TYPE,
} from '@opentelemetry/semantic-conventions';

/** A statement as the SQLite store (packages/users) publishes it: its summary, never its text or parameters. */
interface Statement {
  operation: string;
  collection?: string;
}

/** The channel the store publishes on, one object per statement run. */
const channel = 'svc.users.sqlite.statement';

/**
 * A client span for each statement of the SQLite store, child of the request it runs for, as pg's
 * instrumentation makes them for PostgreSQL. Hand-written: no well-kept instrumentation of
 * better-sqlite3 exists, and the store's writes run in a worker thread no module patch would see.
 */
export function traceSqliteStatements(): void {
  const tracer = trace.getTracer('@sample-services/telemetry');
  const spans = new WeakMap<object, Span>();
  const end = (statement: object): void => {
    spans.get(statement)?.end();
    spans.delete(statement);
  };
  tracingChannel<unknown, Statement>(channel).subscribe({
    start(statement) {
      const parent = context.active();
      // Outside any request, no span (as pg's requireParentSpan).
      if (trace.getSpan(parent) === undefined) return;
      const { operation, collection } = statement;
      const summary = collection === undefined ? operation : `${operation} ${collection}`;
      const attributes = {
        [ATTR_DB_SYSTEM_NAME]: 'sqlite',
        [ATTR_DB_OPERATION_NAME]: operation,
        [ATTR_DB_QUERY_SUMMARY]: summary,
        ...(collection !== undefined && { [ATTR_DB_COLLECTION_NAME]: collection }),
      };
      spans.set(statement, tracer.startSpan(summary, { kind: SpanKind.CLIENT, attributes }, parent));
    },
    error(statement) {
      const { error } = statement;
      const span = spans.get(statement);
      span?.setAttribute(ATTR_ERROR_TYPE, error instanceof Error ? error.constructor.name : 'Error');
      span?.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    },
    // A statement that threw ends at once; one whose promise was returned, once it settles.
    end(statement) {
      if (statement.error !== undefined) end(statement);
    },
    asyncStart: () => undefined,
    asyncEnd: end,
  });
}
