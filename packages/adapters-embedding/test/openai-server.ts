import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback server speaking OpenAI's `POST /v1/embeddings` wire format (request: model,
 * input string or array of strings, encoding_format float|base64, dimensions; response:
 * `{ object: 'list', data: [{ object: 'embedding', index, embedding }], model, usage }`,
 * errors as `{ error: { message, type, code } }`). Vectors are a hashed bag of words, so equal
 * texts give equal vectors and shared words give similar ones.
 */
export interface FakeOpenAI {
  readonly url: string;
  readonly requests: { authorization: string | undefined; body: Record<string, unknown> }[];
  /** Answer the next requests with this status instead (e.g. 500, 401). */
  failWith(status: number | undefined): void;
  close(): Promise<void>;
}

export function bagOfWords(text: string, dims: number): number[] {
  const v = new Array<number>(dims).fill(0);
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? ['<empty>']) {
    let h = 2166136261;
    for (const ch of word) h = Math.imul(h ^ (ch.codePointAt(0) as number), 16777619);
    v[(h >>> 0) % dims] = (v[(h >>> 0) % dims] as number) + 1;
  }
  return v;
}

export async function startFakeOpenAI(dims = 64): Promise<FakeOpenAI> {
  const requests: FakeOpenAI['requests'] = [];
  let failure: number | undefined;
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => {
      raw += c.toString();
    });
    req.on('end', () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const error = (status: number, message: string, type: string) => send(status, { error: { message, type, code: null, param: null } });
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') return error(404, `Unknown route ${req.method} ${req.url}`, 'invalid_request_error');
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return error(400, 'We could not parse the JSON body of your request.', 'invalid_request_error');
      }
      requests.push({ authorization: req.headers.authorization, body });
      if (failure === 401) return error(401, 'Incorrect API key provided.', 'invalid_request_error');
      if (failure) return error(failure, 'The server had an error while processing your request.', 'server_error');
      if (typeof body.model !== 'string') return error(400, "'model' is a required property", 'invalid_request_error');
      const input = typeof body.input === 'string' ? [body.input] : body.input;
      if (!Array.isArray(input) || input.length === 0 || !input.every((t) => typeof t === 'string' && t.length > 0)) {
        return error(400, "'input' must be a non-empty string or array of non-empty strings", 'invalid_request_error');
      }
      const base64 = body.encoding_format === 'base64';
      const size = typeof body.dimensions === 'number' ? body.dimensions : dims;
      send(200, {
        object: 'list',
        model: body.model,
        data: (input as string[]).map((text, index) => {
          const values = bagOfWords(text, size);
          return {
            object: 'embedding',
            index,
            embedding: base64 ? Buffer.from(Float32Array.from(values).buffer).toString('base64') : values,
          };
        }),
        usage: { prompt_tokens: input.length, total_tokens: input.length },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    failWith(status) {
      failure = status;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
