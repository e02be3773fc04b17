/**
 * An OTLP/HTTP trace receiver for the tests: it takes POST /v1/traces in protobuf
 * (application/x-protobuf) or JSON (application/json), as a collector does, and keeps every span
 * in one form whichever encoding it came in. The protobuf is read field by field from the
 * OTLP trace schema (opentelemetry-proto, trace/v1 and common/v1): only the fields the tests look at.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export type AttributeValue = string | number | boolean;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  startNanos: bigint;
  endNanos: bigint;
  attributes: Record<string, AttributeValue>;
  /** OTLP's StatusCode: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  /** The resource's service.name. */
  service: string;
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** The content types of the requests received, in order. */
  contentTypes: string[];
  close: () => Promise<void>;
}

export const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;

/** A protobuf message as its fields: number -> the values (varint or fixed as bigint, length-delimited as bytes). */
type Fields = Map<number, (bigint | Buffer)[]>;

function readVarint(buffer: Buffer, at: { offset: number }): bigint {
  let value = 0n;
  for (let shift = 0n; ; shift += 7n) {
    const byte = buffer[at.offset++] as number;
    value |= BigInt(byte & 0x7f) << shift;
    if (byte < 0x80) return value;
  }
}

function fieldsOf(buffer: Buffer): Fields {
  const fields: Fields = new Map();
  const at = { offset: 0 };
  while (at.offset < buffer.length) {
    const key = Number(readVarint(buffer, at));
    const [field, wireType] = [key >>> 3, key & 7];
    let value: bigint | Buffer;
    if (wireType === 0) value = readVarint(buffer, at);
    else if (wireType === 1) value = buffer.readBigUInt64LE((at.offset += 8) - 8);
    else if (wireType === 5) value = BigInt(buffer.readUInt32LE((at.offset += 4) - 4));
    else if (wireType === 2) {
      const length = Number(readVarint(buffer, at));
      value = buffer.subarray(at.offset, (at.offset += length));
    } else throw new Error(`protobuf wire type ${wireType} is not in the OTLP trace schema`);
    fields.set(field, [...(fields.get(field) ?? []), value]);
  }
  return fields;
}

const messages = (fields: Fields, field: number): Fields[] => (fields.get(field) ?? []).map((bytes) => fieldsOf(bytes as Buffer));
const bytesOf = (fields: Fields, field: number): Buffer => (fields.get(field)?.[0] as Buffer | undefined) ?? Buffer.alloc(0);
const numberOf = (fields: Fields, field: number): bigint => (fields.get(field)?.[0] as bigint | undefined) ?? 0n;

/** KeyValue { key = 1; AnyValue value = 2 }, AnyValue { string = 1; bool = 2; int = 3; double = 4 }. */
function protobufAttributes(list: Fields[]): Record<string, AttributeValue> {
  const attributes: Record<string, AttributeValue> = {};
  for (const pair of list) {
    const value = messages(pair, 2)[0] ?? new Map();
    const key = bytesOf(pair, 1).toString();
    if (value.has(1)) attributes[key] = bytesOf(value, 1).toString();
    else if (value.has(2)) attributes[key] = numberOf(value, 2) === 1n;
    else if (value.has(3)) attributes[key] = Number(BigInt.asIntN(64, numberOf(value, 3)));
    else if (value.has(4))
      attributes[key] = Buffer.from(BigInt.asUintN(64, numberOf(value, 4)).toString(16).padStart(16, '0'), 'hex').readDoubleBE();
  }
  return attributes;
}

/** ExportTraceServiceRequest { ResourceSpans = 1 }, ResourceSpans { Resource = 1; ScopeSpans = 2 }, ScopeSpans { Span = 2 }. */
function protobufSpans(body: Buffer): ReceivedSpan[] {
  return messages(fieldsOf(body), 1).flatMap((resourceSpans) => {
    const resource = protobufAttributes(messages(messages(resourceSpans, 1)[0] ?? new Map(), 1));
    return messages(resourceSpans, 2).flatMap((scopeSpans) =>
      messages(scopeSpans, 2).map((span) => ({
        traceId: bytesOf(span, 1).toString('hex'),
        spanId: bytesOf(span, 2).toString('hex'),
        parentSpanId: bytesOf(span, 4).toString('hex'),
        name: bytesOf(span, 5).toString(),
        kind: Number(numberOf(span, 6)),
        startNanos: numberOf(span, 7),
        endNanos: numberOf(span, 8),
        attributes: protobufAttributes(messages(span, 9)),
        statusCode: Number(numberOf(messages(span, 15)[0] ?? new Map(), 3)),
        service: String(resource['service.name']),
      })),
    );
  });
}

interface JsonKeyValue {
  key: string;
  value: { stringValue?: string; boolValue?: boolean; intValue?: string | number; doubleValue?: number };
}
interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
  attributes?: JsonKeyValue[];
  status?: { code?: number };
}
interface JsonRequest {
  resourceSpans: { resource?: { attributes?: JsonKeyValue[] }; scopeSpans: { spans?: JsonSpan[] }[] }[];
}

function jsonAttributes(list: JsonKeyValue[] = []): Record<string, AttributeValue> {
  const attributes: Record<string, AttributeValue> = {};
  for (const { key, value } of list) {
    const found = value.stringValue ?? value.boolValue ?? value.doubleValue ?? value.intValue;
    if (found !== undefined) attributes[key] = value.intValue === undefined ? found : Number(value.intValue);
  }
  return attributes;
}

/** OTLP/JSON: ids as hex, 64-bit integers as strings or numbers, enums as integers. */
function jsonSpans(body: Buffer): ReceivedSpan[] {
  return (JSON.parse(body.toString()) as JsonRequest).resourceSpans.flatMap((resourceSpans) => {
    const service = String(jsonAttributes(resourceSpans.resource?.attributes)['service.name']);
    return resourceSpans.scopeSpans.flatMap((scopeSpans) =>
      (scopeSpans.spans ?? []).map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? '',
        name: span.name,
        kind: span.kind,
        startNanos: BigInt(span.startTimeUnixNano),
        endNanos: BigInt(span.endTimeUnixNano),
        attributes: jsonAttributes(span.attributes),
        statusCode: span.status?.code ?? 0,
        service,
      })),
    );
  });
}

async function bodyOf(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Starts a receiver on 127.0.0.1 (an ephemeral port); `url` is what OTEL_EXPORTER_OTLP_ENDPOINT takes. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const contentTypes: string[] = [];
  const server = createServer((request, response) => {
    void bodyOf(request).then((body) => {
      const contentType = request.headers['content-type'] ?? '';
      contentTypes.push(contentType);
      if (request.method !== 'POST' || request.url !== '/v1/traces') return response.writeHead(404).end();
      const json = contentType.startsWith('application/json');
      spans.push(...(json ? jsonSpans(body) : protobufSpans(body)));
      // An empty ExportTraceServiceResponse: full success.
      response.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    contentTypes,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
