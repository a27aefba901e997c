// Writes spans that Langfuse's authors captured from instrumented SDKs out as one
// OTLP/JSON document ({"resourceSpans": [...]}) on stdout, so anyone can re-derive the
// captured files beside it and in ../openinference/ from langfuse/langfuse (MIT outside
// ee/). No value is retyped: the source is read and converted by the code below.
//
//   git --git-dir=LANGFUSE show COMMIT:PATH > source
//   node extract.mjs literal source "TEST TITLE" > out.json   # a span literal in a test
//   node extract.mjs trace source > out.json                  # a framework trace export
//
// literal: the first `resourceSpan = {` (or `...Spans = [`) after the `it("TEST TITLE"`
//   line of a TypeScript test is evaluated as the JavaScript literal it is; ids kept as
//   Node Buffers ({type: "Buffer", data: [...]}) become hex, as OTLP/JSON requires, and
//   64-bit numbers kept as Long ({low, high, unsigned}) become decimal strings (times in
//   unix nanoseconds, intValue as OTLP/JSON writes it).
// trace: a trace downloaded from Langfuse's UI (worker/src/__tests__/chatml/
//   framework-traces/*.trace.json): one span per observation, its id, parent, name and
//   the span attributes, resource attributes and scope Langfuse kept in its metadata;
//   times are the observation's (milliseconds: Langfuse keeps no finer time); attribute
//   values are as Langfuse kept them (numbers it stored as text stay text; the JSON
//   values it parsed back into objects are written as JSON text again); level ERROR is
//   status code 2 with the status message. Spans are ordered by start time, then id.
import { readFileSync } from "node:fs";

const [mode, file, title] = process.argv.slice(2);
const text = readFileSync(file, "utf8");

function literalAfter(source, testTitle) {
  const at = source.indexOf(`it("${testTitle}"`);
  if (at < 0) throw new Error(`no test titled ${testTitle}`);
  const found = /(resourceSpan|\w+Spans?)\s*=\s*([[{])/.exec(source.slice(at));
  if (!found) throw new Error(`no span literal after ${testTitle}`);
  const start = at + found.index + found[0].length - 1;
  let depth = 0, quote = null;
  for (let i = start; i < source.length; i++) {
    const c = source[i];
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'" || c === "`") quote = c;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      depth--;
      if (depth === 0) return source.slice(start, i + 1);
    }
  }
  throw new Error("unbalanced literal");
}

const hex = (bytes) => Buffer.from(bytes).toString("hex");
const isLong = (v) => v && typeof v === "object" && "low" in v && "high" in v
  && "unsigned" in v;
const long = (v) => {
  const n = (BigInt(v.high >>> 0) << 32n) | BigInt(v.low >>> 0);
  return (v.unsigned ? n : BigInt.asIntN(64, n)).toString();
};

function otlpJson(value, key) {
  if (Array.isArray(value)) return value.map((v) => otlpJson(v));
  if (value && typeof value === "object") {
    if (value.type === "Buffer" && Array.isArray(value.data)) return hex(value.data);
    if (Buffer.isBuffer(value)) return hex(value);
    if (isLong(value)) return long(value);
    const out = {};
    for (const [k, v] of Object.entries(value)) out[k] = otlpJson(v, k);
    return out;
  }
  return value;
}

function fromLiteral() {
  const literal = new Function(`return (${literalAfter(text, title)});`)();
  const resourceSpans = Array.isArray(literal) ? literal : [literal];
  return { resourceSpans: otlpJson(resourceSpans) };
}

function anyValue(v) {
  if (typeof v === "string") return { stringValue: v };
  if (typeof v === "boolean") return { boolValue: v };
  if (typeof v === "number") {
    return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
  }
  if (Array.isArray(v) && v.every((x) => x === null || typeof x !== "object")) {
    return { arrayValue: { values: v.map(anyValue) } };
  }
  return { stringValue: JSON.stringify(v) };
}

const attributes = (map) => Object.entries(map ?? {}).map(([key, v]) => ({
  key, value: anyValue(v) }));
const nanos = (iso) => (BigInt(Date.parse(iso)) * 1000000n).toString();

function fromTrace() {
  const trace = JSON.parse(text);
  const groups = new Map();
  const observations = [...trace.observations].sort((a, b) =>
    a.startTime < b.startTime ? -1 : a.startTime > b.startTime ? 1
      : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  for (const o of observations) {
    const meta = typeof o.metadata === "string" ? JSON.parse(o.metadata) : o.metadata ?? {};
    const resource = meta.resourceAttributes ?? {};
    const scope = meta.scope ?? {};
    const key = JSON.stringify([resource, scope.name ?? "", scope.version ?? ""]);
    if (!groups.has(key)) groups.set(key, { resource, scope, spans: [] });
    const span = { traceId: o.traceId, spanId: o.id };
    if (o.parentObservationId) span.parentSpanId = o.parentObservationId;
    span.name = o.name;
    span.startTimeUnixNano = nanos(o.startTime);
    span.endTimeUnixNano = nanos(o.endTime ?? o.startTime);
    span.attributes = attributes(meta.attributes);
    span.status = o.level === "ERROR"
      ? { code: 2, ...(o.statusMessage ? { message: o.statusMessage } : {}) } : {};
    groups.get(key).spans.push(span);
  }
  return { resourceSpans: [...groups.values()].map((g) => ({
    resource: { attributes: attributes(g.resource) },
    scopeSpans: [{
      scope: { name: g.scope.name ?? "", ...(g.scope.version ? { version: g.scope.version } : {}) },
      spans: g.spans,
    }],
  })) };
}

const doc = mode === "literal" ? fromLiteral() : mode === "trace" ? fromTrace() : null;
if (!doc) throw new Error("usage: node extract.mjs literal|trace FILE [TEST TITLE]");
process.stdout.write(JSON.stringify(doc, null, 1) + "\n");
