import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { countTokens } from 'gpt-tokenizer/encoding/cl100k_base';

/**
 * A loopback server speaking OpenAI's `POST /v1/embeddings` wire format as documented:
 *
 * - request: JSON with `model` (string, required), `input` (a non-empty string, an array of
 *   at most 2048 non-empty strings, an array of token ids or an array of such arrays; at most
 *   8192 tokens per input and 300000 per request, counted with cl100k_base), optional
 *   `encoding_format` (`float` | `base64`), `dimensions` (integer ≥ 1, text-embedding-3 models
 *   only, at most the model's size) and `user`; `Authorization: Bearer <key>`;
 * - response: `{ object: 'list', data: [{ object: 'embedding', index, embedding }], model,
 *   usage: { prompt_tokens, total_tokens } }`, `embedding` a list of floats or, for
 *   `base64`, the little-endian float32 bytes in base64;
 * - errors: `{ error: { message, type, param, code } }` with 400, 401, 404, 429, 500.
 *
 * Vectors are a hashed bag of words (not unit length, as a server's need not be), so equal
 * texts give equal vectors and texts with shared words similar ones.
 */
export interface FakeOpenAI {
  /** Base URL including `/v1`, as the client's `baseURL`. */
  readonly url: string;
  /** Every request that reached the embeddings route, in order. */
  readonly requests: { authorization: string | undefined; body: Record<string, unknown> }[];
  /** Answer the next `times` requests with this status (429, 500, 503, ...). */
  failNext(status: number, times?: number): void;
  close(): Promise<void>;
}

export interface FakeOpenAIOptions {
  /** The accepted API key. Default `sk-test`. */
  readonly apiKey?: string;
  /** Models and their native vector length. */
  readonly models?: Record<string, number>;
}

export function bagOfWords(text: string, dims: number): number[] {
  const v = new Array<number>(dims).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? ['<blank>']) {
    let h = 2166136261;
    for (const ch of word) h = Math.imul(h ^ (ch.codePointAt(0) as number), 16777619);
    const slot = (h >>> 0) % dims;
    v[slot] = (v[slot] as number) + 1;
  }
  // Text without letters or digits still gets a non-zero vector.
  if (!v.some((x) => x !== 0)) v[0] = 1;
  return v;
}

const isTokenArray = (x: unknown): x is number[] => Array.isArray(x) && x.length > 0 && x.every((t) => Number.isInteger(t) && t >= 0 && t <= 100_257);

export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const apiKey = options.apiKey ?? 'sk-test';
  const models = options.models ?? { 'text-embedding-3-small': 1536, 'text-embedding-3-large': 3072, 'text-embedding-ada-002': 1536 };
  const requests: FakeOpenAI['requests'] = [];
  const failures: number[] = [];

  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `req_${requests.length}`, ...headers });
      res.end(JSON.stringify(body));
    };
    const fail = (status: number, message: string, type: string, code: string | null = null, param: string | null = null, headers?: Record<string, string>) =>
      send(status, { error: { message, type, param, code } }, headers);

    if (req.method !== 'POST' || req.url !== '/v1/embeddings') return fail(404, `Invalid URL (${req.method} ${req.url})`, 'invalid_request_error');
    const auth = req.headers.authorization;
    const key = /^Bearer (.+)$/.exec(auth ?? '')?.[1];
    if (!key) {
      return fail(401, "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).", 'invalid_request_error');
    }
    if (key !== apiKey) {
      return fail(
        401,
        `Incorrect API key provided: ${key.slice(0, 3)}****${key.slice(-4)}. You can find your API key at https://platform.openai.com/account/api-keys.`,
        'invalid_request_error',
        'invalid_api_key',
      );
    }
    if (!String(req.headers['content-type']).startsWith('application/json')) {
      return fail(400, 'Unsupported content type; expected application/json.', 'invalid_request_error');
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return fail(400, "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly.)", 'invalid_request_error');
    }
    requests.push({ authorization: auth, body });
    const failure = failures.shift();
    if (failure === 429) {
      return fail(429, 'Rate limit reached for requests per min (RPM). Please try again in 10ms.', 'requests', 'rate_limit_exceeded', null, { 'retry-after-ms': '10' });
    }
    if (failure !== undefined) {
      return fail(failure, 'The server had an error while processing your request. Sorry about that!', 'server_error', null, null, { 'retry-after-ms': '10' });
    }

    if (typeof body.model !== 'string' || body.model === '') return fail(400, 'you must provide a model parameter', 'invalid_request_error', null, 'model');
    const size = models[body.model];
    if (size === undefined) {
      return fail(404, `The model \`${body.model}\` does not exist or you do not have access to it.`, 'invalid_request_error', 'model_not_found');
    }
    const format = body.encoding_format ?? 'float';
    if (format !== 'float' && format !== 'base64') {
      return fail(400, `Invalid value for 'encoding_format': expected one of 'float' or 'base64', got '${String(format)}'.`, 'invalid_request_error', null, 'encoding_format');
    }
    let dims = size;
    if (body.dimensions !== undefined) {
      if (!body.model.startsWith('text-embedding-3')) return fail(400, 'This model does not support specifying dimensions.', 'invalid_request_error', null, 'dimensions');
      if (!Number.isInteger(body.dimensions) || (body.dimensions as number) < 1 || (body.dimensions as number) > size) {
        return fail(400, `Invalid value for 'dimensions' = ${String(body.dimensions)}. Must be between 1 and ${size}.`, 'invalid_request_error', null, 'dimensions');
      }
      dims = body.dimensions as number;
    }
    if (body.user !== undefined && typeof body.user !== 'string') return fail(400, "Invalid type for 'user': expected a string.", 'invalid_request_error', null, 'user');

    // input: string | string[] | number[] | number[][]
    const input = body.input;
    let texts: (string | number[])[];
    if (typeof input === 'string') texts = [input];
    else if (isTokenArray(input)) texts = [input];
    else if (Array.isArray(input) && input.length > 0 && (input.every((t) => typeof t === 'string') || input.every(isTokenArray))) texts = input as (string | number[])[];
    else return fail(400, "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.", 'invalid_request_error', null, 'input');
    if (texts.length > 2048) return fail(400, `'$.input' is too long: ${texts.length} items, at most 2048.`, 'invalid_request_error', null, 'input');
    if (texts.some((t) => t.length === 0)) return fail(400, "'$.input' is invalid: inputs must not be empty strings.", 'invalid_request_error', null, 'input');
    const counts = texts.map((t) => (typeof t === 'string' ? countTokens(t) : t.length));
    const longest = Math.max(...counts);
    if (longest > 8192) {
      return fail(
        400,
        `This model's maximum context length is 8192 tokens, however you requested ${longest} tokens (${longest} in your prompt; 0 for the completion). Please reduce your prompt; or completion length.`,
        'invalid_request_error',
      );
    }
    const total = counts.reduce((a, b) => a + b, 0);
    if (total > 300_000) return fail(400, `Requested ${total} tokens, max 300000 tokens per request`, 'max_tokens_per_request', 'max_tokens_per_request');

    send(200, {
      object: 'list',
      data: texts.map((t, index) => {
        const values = bagOfWords(typeof t === 'string' ? t : t.join(' '), dims);
        return {
          object: 'embedding',
          index,
          embedding: format === 'base64' ? Buffer.from(Float32Array.from(values).buffer).toString('base64') : values,
        };
      }),
      model: body.model,
      usage: { prompt_tokens: total, total_tokens: total },
    });
  };

  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(parts).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    failNext(status, times = 1) {
      for (let i = 0; i < times; i++) failures.push(status);
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
