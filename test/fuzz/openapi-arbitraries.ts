// OpenAPI 3 operations -> fast-check arbitraries of HTTP requests: valid ones (every value within
// its schema) and invalid ones (one mutation of a valid request: a wrong type, a missing required
// field, an unknown field, a huge string, a NUL byte, an injection string, malformed JSON, a wrong
// content type, a number past its bound, a broken path segment, a bad header).
import fc from 'fast-check';
import { HOSTILE_NAMES } from '../helpers/prototypes.js';

/** The subset of JSON Schema that Fastify/TypeBox route schemas produce. */
export interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  nullable?: boolean;
  default?: unknown;
}

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required: boolean;
  schema: JsonSchema;
}

export interface Operation {
  /** `POST /api/v1/pengguna/{id}` */
  id: string;
  method: string;
  path: string;
  parameters: Parameter[];
  body?: { contentType: string; schema: JsonSchema; required: boolean };
  /** Declares a security requirement. */
  secured: boolean;
  /** Documented response statuses (`200`, `403`, `default`...). */
  responses: string[];
}

export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
  /** What was done to make it invalid (`valid` for none): printed with every finding. */
  mutation: string;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/** Every operation of an OpenAPI 3 document. */
export function operationsOf(document: { paths?: Record<string, Record<string, unknown>>; security?: unknown[] }): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const [method, raw] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      const op = raw as {
        parameters?: Parameter[];
        requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> };
        security?: unknown[];
        responses?: Record<string, unknown>;
      };
      const content = op.requestBody?.content ?? {};
      const contentType = Object.keys(content)[0];
      operations.push({
        id: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        parameters: (op.parameters ?? []).map((p) => ({ ...p, required: p.required === true || p.in === 'path', schema: p.schema ?? {} })),
        body: contentType
          ? { contentType, schema: content[contentType]?.schema ?? {}, required: op.requestBody?.required === true }
          : undefined,
        secured: (op.security ?? document.security ?? []).length > 0,
        responses: Object.keys(op.responses ?? {}),
      });
    }
  }
  return operations;
}

/** Values a route may want that random strings never hit: known ids, names, a loopback URL. */
export interface Hints {
  /** By parameter or property name: values to draw from, mixed with generated ones. */
  known?: Record<string, readonly unknown[]>;
}

function typesOf(schema: JsonSchema): string[] {
  if (Array.isArray(schema.type)) return schema.type;
  if (schema.type) return [schema.type];
  if (schema.properties) return ['object'];
  if (schema.items) return ['array'];
  return [];
}

const ISO_MIN = new Date('2000-01-01T00:00:00Z');
const ISO_MAX = new Date('2040-01-01T00:00:00Z');

function stringOf(schema: JsonSchema): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0;
  const max = Math.max(min, Math.min(schema.maxLength ?? 40, 40));
  const fits = (value: string) => value.length >= min && value.length <= (schema.maxLength ?? Infinity);
  switch (schema.format) {
    case 'email':
      return fc.emailAddress().filter(fits);
    case 'uuid':
      return fc.uuid();
    case 'date-time':
      return fc.date({ min: ISO_MIN, max: ISO_MAX, noInvalidDate: true }).map((date) => date.toISOString());
    case 'date':
      return fc.date({ min: ISO_MIN, max: ISO_MAX, noInvalidDate: true }).map((date) => date.toISOString().slice(0, 10));
    default:
  }
  if (schema.pattern) {
    let pattern: RegExp | undefined;
    try {
      pattern = new RegExp(schema.pattern);
    } catch {
      pattern = undefined;
    }
    if (pattern) return fc.stringMatching(pattern, { size: 'small' }).filter(fits);
  }
  return fc.oneof(
    { weight: 3, arbitrary: fc.string({ minLength: min, maxLength: max }) },
    { weight: 1, arbitrary: fc.string({ minLength: min, maxLength: max, unit: 'grapheme' }).filter(fits) },
  );
}

function numberOf(schema: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const low =
    schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + (integer ? 1 : Number.EPSILON) : -1_000_000);
  const high =
    schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - (integer ? 1 : Number.EPSILON) : 1_000_000);
  const bounded = integer
    ? fc.integer({ min: Math.ceil(low), max: Math.floor(high) })
    : fc.double({ min: low, max: high, noNaN: true, noDefaultInfinity: true });
  // The bounds themselves are where off-by-ones live.
  return fc.oneof(
    { weight: 4, arbitrary: bounded },
    { weight: 1, arbitrary: fc.constantFrom(integer ? Math.ceil(low) : low, integer ? Math.floor(high) : high) },
  );
}

/** An arbitrary of values valid against the schema. */
export function valueOf(schema: JsonSchema, hints: Hints = {}, name?: string, depth = 0): fc.Arbitrary<unknown> {
  const known = name ? hints.known?.[name] : undefined;
  const generated = generatedValueOf(schema, hints, depth);
  if (!known || known.length === 0) return generated;
  return fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: generated });
}

function generatedValueOf(schema: JsonSchema, hints: Hints, depth: number): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map((alternative) => valueOf(alternative, hints, undefined, depth + 1)));
  if (schema.allOf) return valueOf(Object.assign({}, ...schema.allOf) as JsonSchema, hints, undefined, depth + 1);
  const types = typesOf(schema);
  const each = types.map((type): fc.Arbitrary<unknown> => {
    switch (type) {
      case 'string':
        return stringOf(schema);
      case 'integer':
        return numberOf(schema, true);
      case 'number':
        return numberOf(schema, false);
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'array': {
        const minLength = schema.minItems ?? 0;
        const maxLength = Math.max(minLength, Math.min(schema.maxItems ?? 4, 4));
        return fc.array(valueOf(schema.items ?? {}, hints, undefined, depth + 1), { minLength, maxLength });
      }
      case 'object':
        return objectOf(schema, hints, depth);
      default:
        return fc.jsonValue({ maxDepth: 2 });
    }
  });
  if (schema.nullable) each.push(fc.constant(null));
  if (each.length === 0) return depth > 3 ? fc.constant('x') : fc.jsonValue({ maxDepth: 2 });
  return each.length === 1 ? each[0]! : fc.oneof(...each);
}

function objectOf(schema: JsonSchema, hints: Hints, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties = schema.properties ?? {};
  const record = fc.record(
    Object.fromEntries(Object.entries(properties).map(([key, property]) => [key, valueOf(property, hints, key, depth + 1)])),
    { requiredKeys: (schema.required ?? []).filter((key) => key in properties) },
  );
  const extra = schema.additionalProperties;
  if (!extra || typeof extra !== 'object') return record;
  const free = fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9_.-]{0,15}$/), valueOf(extra, hints, undefined, depth + 1), { maxKeys: 3 });
  return fc.tuple(free, record).map(([more, fixed]) => ({ ...more, ...fixed }));
}

// ---- invalid values -------------------------------------------------------------------------

/** Strings that have broken parsers, query builders and renderers elsewhere. */
export const INJECTIONS: readonly string[] = [
  "' OR '1'='1",
  "'; DROP TABLE users; --",
  '" OR ""="',
  '1; SELECT pg_sleep(0)',
  '%',
  '%%',
  '%F0%9F',
  '\\',
  '\\u0000',
  '<script>alert(1)</script>',
  '{{7*7}}',
  '${7*7}',
  '../../../../etc/passwd',
  '..%2F..%2Fetc',
  '__proto__',
  'constructor',
  '=HYPERLINK("http://127.0.0.1")',
  '@timestamp',
  '*',
  '?',
  'NOT NOT NOT NOT',
  '(((((((((',
  ')',
  '"',
  "'",
  '\u202e',
  '\ud800',
  'a\u0000b',
  '\r\nX-Injected: 1',
  'null',
  'undefined',
  'NaN',
  'Infinity',
  '-0',
  '1e309',
  '0x10',
  ' ',
  '',
];

/** Numbers at and past every bound an integer column or a JS number has. */
export const BOUNDARY_NUMBERS: readonly number[] = [
  -1,
  0,
  -0,
  1,
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 53,
  -(2 ** 53),
  Number.MAX_SAFE_INTEGER + 2,
  1e308,
  -1e308,
  0.5,
  1e-308,
];

/** A value of some other JSON type than the schema wants. */
export function wrongTypeOf(schema: JsonSchema): fc.Arbitrary<unknown> {
  const types = new Set(typesOf(schema));
  const others: fc.Arbitrary<unknown>[] = [];
  if (!types.has('string')) others.push(fc.constantFrom('x', '', '12', 'true', 'null'));
  if (!types.has('integer') && !types.has('number')) others.push(fc.constantFrom(...BOUNDARY_NUMBERS));
  if (!types.has('boolean')) others.push(fc.boolean());
  if (!types.has('array')) others.push(fc.constantFrom([], [1, 'x'], [{}]));
  if (!types.has('object')) others.push(fc.constantFrom({}, { a: 1 }, { __proto__: { admin: true } }));
  if (!types.has('null') && !schema.nullable) others.push(fc.constant(null));
  return fc.oneof(...others);
}

/** A value that breaks one rule of the schema (type, bound, length, pattern, enum) or a nasty one. */
export function invalidValueOf(schema: JsonSchema): fc.Arbitrary<unknown> {
  const choices: fc.Arbitrary<unknown>[] = [wrongTypeOf(schema), fc.constantFrom(...INJECTIONS)];
  const types = typesOf(schema);
  if (types.includes('string') || types.length === 0) {
    choices.push(hugeString());
    choices.push(fc.string({ maxLength: 20 }).map((text) => `${text}\u0000${text}`));
    if (schema.minLength) choices.push(fc.constant('x'.repeat(schema.minLength - 1)));
    if (schema.maxLength !== undefined) choices.push(fc.constant('y'.repeat(schema.maxLength + 1)));
  }
  if (types.includes('integer') || types.includes('number')) {
    choices.push(fc.constantFrom(...BOUNDARY_NUMBERS));
    if (schema.minimum !== undefined) choices.push(fc.constant(schema.minimum - 1));
    if (schema.maximum !== undefined) choices.push(fc.constant(schema.maximum + 1));
    if (types.includes('integer')) choices.push(fc.constant(1.5));
  }
  if (types.includes('array') && schema.maxItems !== undefined)
    choices.push(fc.constant(Array.from({ length: schema.maxItems + 1 }, () => 'z')));
  return fc.oneof(...choices);
}

/** Long enough to pass any field limit, short enough to fit under the body limits (1 MiB). */
export function hugeString(): fc.Arbitrary<string> {
  return fc
    .constantFrom(10_000, 100_000, 500_000)
    .chain((length) => fc.constantFrom('a', 'é', '\u{1F600}', '%00').map((unit) => unit.repeat(Math.ceil(length / unit.length))));
}

// ---- requests -------------------------------------------------------------------------------

type Parts = { path: Record<string, string>; query: Record<string, unknown>; body: unknown; headers: Record<string, string> };

function paramsRecord(parameters: Parameter[], where: Parameter['in'], hints: Hints): fc.Arbitrary<Record<string, unknown>> {
  const list = parameters.filter((p) => p.in === where);
  return fc.record(Object.fromEntries(list.map((p) => [p.name, valueOf(p.schema, hints, p.name)])), {
    requiredKeys: list.filter((p) => p.required).map((p) => p.name),
  });
}

function validParts(op: Operation, hints: Hints): fc.Arbitrary<Parts> {
  return fc.record({
    path: paramsRecord(op.parameters, 'path', hints).map((values) =>
      Object.fromEntries(Object.entries(values).map(([k, v]) => [k, String(v)])),
    ),
    query: paramsRecord(op.parameters, 'query', hints),
    body: op.body ? valueOf(op.body.schema, hints) : fc.constant(undefined),
    headers: paramsRecord(op.parameters, 'header', hints).map((values) =>
      Object.fromEntries(Object.entries(values).map(([k, v]) => [k, String(v)])),
    ),
  });
}

function queryString(query: Record<string, unknown>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) search.append(key, typeof item === 'string' ? item : JSON.stringify(item));
    else
      search.append(
        key,
        typeof value === 'string'
          ? value
          : typeof value === 'object' && value !== null
            ? JSON.stringify(value)
            : String(value as number | boolean),
      );
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

function toRequest(op: Operation, parts: Parts, mutation: string, rawPath?: Record<string, string>): FuzzRequest {
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => rawPath?.[name] ?? encodePathValue(parts.path[name] ?? 'x'));
  const headers: Record<string, string> = { ...parts.headers };
  let payload: string | undefined;
  if (parts.body !== undefined) {
    headers['content-type'] = op.body?.contentType ?? 'application/json';
    payload = JSON.stringify(parts.body);
  }
  return { method: op.method, url: `${path}${queryString(parts.query)}`, headers, payload, mutation };
}

/** Requests that satisfy every documented rule of the operation. */
/** A path value percent-encoded; a lone surrogate (which encodeURIComponent refuses) sent as U+FFFD. */
function encodePathValue(value: string): string {
  return encodeURIComponent(value.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD'));
}

export function validRequest(op: Operation, hints: Hints = {}): fc.Arbitrary<FuzzRequest> {
  return validParts(op, hints).map((parts) => toRequest(op, parts, 'valid'));
}

type Mutator = (op: Operation, parts: Parts) => fc.Arbitrary<FuzzRequest> | undefined;

/** JSON text of `value` with `key` added to every object in it (as text: JSON.stringify drops `__proto__`). */
function withKeyEverywhere(value: unknown, key: string, added: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => withKeyEverywhere(item, key, added)).join(',')}]`;
  if (typeof value !== 'object' || value === null) return JSON.stringify(value) ?? 'null';
  const members = Object.entries(value).map(([name, inner]) => `${JSON.stringify(name)}:${withKeyEverywhere(inner, key, added)}`);
  return `{${[`${JSON.stringify(key)}:${JSON.stringify(added)}`, ...members].join(',')}}`;
}

function bodyObject(parts: Parts): Record<string, unknown> | undefined {
  return parts.body && typeof parts.body === 'object' && !Array.isArray(parts.body) ? (parts.body as Record<string, unknown>) : undefined;
}

const MUTATORS: Record<string, Mutator> = {
  'body: a field of the wrong type or out of its rules': (op, parts) => {
    const body = bodyObject(parts);
    const properties = Object.entries(op.body?.schema.properties ?? {});
    if (!body || properties.length === 0) return undefined;
    return fc
      .constantFrom(...properties)
      .chain(([key, schema]) =>
        invalidValueOf(schema).map((value) =>
          toRequest(op, { ...parts, body: { ...body, [key]: value } }, `body.${key} = ${preview(value)}`),
        ),
      );
  },
  'body: a required field missing': (op, parts) => {
    const body = bodyObject(parts);
    const required = op.body?.schema.required ?? [];
    if (!body || required.length === 0) return undefined;
    return fc.constantFrom(...required).map((key) => {
      const { [key]: _dropped, ...rest } = body;
      return toRequest(op, { ...parts, body: rest }, `body without ${key}`);
    });
  },
  'body: unknown fields': (op, parts) => {
    const body = bodyObject(parts);
    if (!body) return undefined;
    return fc
      .record({
        key: fc.constantFrom(...HOSTILE_NAMES, 'is_admin', 'id', 'tenant_id', 'role', 'unexpected'),
        value: fc.jsonValue({ maxDepth: 2 }),
      })
      .map(({ key, value }) => {
        const payload = JSON.stringify(body).replace(
          /^\{/,
          `{${JSON.stringify(key)}:${JSON.stringify(value)}${Object.keys(body).length > 0 ? ',' : ''}`,
        );
        return { ...toRequest(op, parts, `body + ${key}`), payload };
      });
  },
  'body: hostile names in every object at every depth': (op, parts) => {
    const body = bodyObject(parts);
    if (!body) return undefined;
    return fc
      .record({ key: fc.constantFrom(...HOSTILE_NAMES), value: fc.constantFrom<unknown>({ polluted: true }, 'x', 1, ['a']) })
      .map(({ key, value }) => ({
        ...toRequest(op, parts, `body + ${key} in every object`),
        payload: withKeyEverywhere(body, key, value),
      }));
  },
  'body: not an object': (op, parts) => {
    if (!op.body) return undefined;
    return fc
      .constantFrom('[]', '"text"', '42', 'null', 'true', '[{}]')
      .map((payload) => ({ ...toRequest(op, parts, `body ${payload}`), payload }));
  },
  'body: malformed JSON': (op, parts) => {
    if (!op.body) return undefined;
    const text = JSON.stringify(parts.body ?? {});
    return fc
      .constantFrom(
        text.slice(0, Math.max(1, text.length - 1)),
        `${text},`,
        `${text}}`,
        '{"a":',
        '{a:1}',
        "{'a':1}",
        '\u0000',
        '\ufeff{}',
        '{"a":1e999}',
        `${'['.repeat(5000)}${']'.repeat(5000)}`,
        `{"a":"\\ud800"}`,
      )
      .map((payload) => ({ ...toRequest(op, parts, `malformed body ${preview(payload)}`), payload }));
  },
  'body: wrong or missing content type': (op, parts) => {
    if (!op.body) return undefined;
    return fc
      .constantFrom(
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/json; charset=latin1',
        'application/jsonx',
        '',
        'application/xml',
      )
      .map((type) => {
        const request = toRequest(op, parts, `content-type ${JSON.stringify(type)}`);
        if (type === '') delete request.headers['content-type'];
        else request.headers['content-type'] = type;
        return request;
      });
  },
  'body: a huge string field': (op, parts) => {
    const body = bodyObject(parts);
    const keys = Object.keys(op.body?.schema.properties ?? {});
    if (!body || keys.length === 0) return undefined;
    return fc
      .tuple(fc.constantFrom(...keys), hugeString())
      .map(([key, value]) => toRequest(op, { ...parts, body: { ...body, [key]: value } }, `body.${key} = ${value.length} chars`));
  },
  'body: a body where none is documented': (op, parts) => {
    if (op.body || op.method === 'GET' || op.method === 'HEAD') return undefined;
    return fc.constantFrom('{"a":1}', '{', 'x'.repeat(1000)).map((payload) => ({
      ...toRequest(op, parts, `undocumented body ${preview(payload)}`),
      headers: { ...parts.headers, 'content-type': 'application/json' },
      payload,
    }));
  },
  'query: a parameter of the wrong type or out of its rules': (op, parts) => {
    const query = op.parameters.filter((p) => p.in === 'query');
    if (query.length === 0) return undefined;
    return fc
      .constantFrom(...query)
      .chain((p) =>
        invalidValueOf(p.schema).map((value) =>
          toRequest(op, { ...parts, query: { ...parts.query, [p.name]: value } }, `query ${p.name} = ${preview(value)}`),
        ),
      );
  },
  'query: repeated, unknown or empty parameters': (op, parts) => {
    const names = [
      ...op.parameters.filter((p) => p.in === 'query').map((p) => p.name),
      'unknown',
      ...HOSTILE_NAMES,
      '__proto__[polluted]',
      'constructor[prototype][polluted]',
    ];
    return fc
      .record({ name: fc.constantFrom(...names), values: fc.constantFrom(['a', 'b'], [''], ['1', '2', '3']) })
      .map(({ name, values }) =>
        toRequest(op, { ...parts, query: { ...parts.query, [name]: values } }, `query ${name} = ${JSON.stringify(values)}`),
      );
  },
  'path: a broken segment': (op, parts) => {
    const names = op.parameters.filter((p) => p.in === 'path').map((p) => p.name);
    if (names.length === 0) return undefined;
    return fc
      .record({
        name: fc.constantFrom(...names),
        raw: fc.constantFrom(
          '%00',
          'a%00b',
          '%2F',
          '..',
          '%2e%2e',
          ' ',
          '%20',
          '%C3%28',
          'x'.repeat(300),
          '%E2%80%AE',
          "'",
          '%27%20OR%201%3D1',
          '-1',
          '0',
          '99999999999999999999',
          '00000000-0000-0000-0000-000000000000',
        ),
      })
      .map(({ name, raw }) => toRequest(op, parts, `path ${name} = ${raw.slice(0, 40)}`, { [name]: raw }));
  },
  'path: a value of the wrong kind': (op, parts) => {
    const list = op.parameters.filter((p) => p.in === 'path');
    if (list.length === 0) return undefined;
    return fc.constantFrom(...list).chain((p) =>
      invalidValueOf(p.schema)
        .filter((value) => typeof value === 'string' && value.length < 2000 && value !== '' && value !== '.' && value !== '..')
        .map((value) =>
          toRequest(op, { ...parts, path: { ...parts.path, [p.name]: String(value) } }, `path ${p.name} = ${preview(value)}`),
        ),
    );
  },
  'headers: odd values': (op, parts) =>
    fc
      .record({
        name: fc.constantFrom(
          'accept-language',
          'accept',
          'x-request-id',
          'x-forwarded-for',
          'x-tenant-id',
          'origin',
          'cookie',
          'content-encoding',
        ),
        value: fc.constantFrom(
          '*',
          '',
          'zz-ZZ;q=2',
          'x'.repeat(4000),
          '; ; ;',
          'access_token=x; access_token=y',
          '999.999.999.999',
          'gzip',
          'br',
          'null',
          'http://evil.invalid',
        ),
      })
      .map(({ name, value }) => {
        const request = toRequest(op, parts, `header ${name}: ${preview(value)}`);
        request.headers[name] = value;
        return request;
      }),
};

/** Who sends it: the actor's credentials go in on top of these; `authorization` here overrides them. */
const BAD_AUTHORIZATION = [
  '',
  'Bearer',
  'Bearer ',
  'Bearer x.y.z',
  'Basic Og==',
  'Basic !!!',
  'Bearer eyJhbGciOiJub25lIn0.e30.',
  'x'.repeat(9000),
  'Bearer \u0000',
  'Digest a=b',
];

/** Requests with exactly one thing wrong; the mutation is named in `mutation`. */
export function invalidRequest(op: Operation, hints: Hints = {}): fc.Arbitrary<FuzzRequest> {
  return validParts(op, hints).chain((parts) => {
    const candidates = Object.values(MUTATORS)
      .map((mutate) => mutate(op, parts))
      .filter((a): a is fc.Arbitrary<FuzzRequest> => a !== undefined);
    candidates.push(
      fc.constantFrom(...BAD_AUTHORIZATION).map((value) => {
        const request = toRequest(op, parts, `authorization ${preview(value)}`);
        request.headers.authorization = value;
        return request;
      }),
    );
    return fc.oneof(...candidates);
  });
}

/** Short printable form of a value, for the mutation's name. */
export function preview(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  return text.length > 60 ? `${text.slice(0, 57)}...(${text.length})` : text;
}
