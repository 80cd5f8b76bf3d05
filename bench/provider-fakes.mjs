// Loopback stand-ins for the providers' streaming routes, for bench/providers.mjs, run in a child
// process (bench/child.mjs's protocol: it sends `{ url }` once it listens and exits when the
// parent disconnects) so the measured process does only the client's work. Every request is
// answered at once with the same WORDS words, one event per word, in the format its path names:
//   .../chat/completions   OpenAI's chat completion chunks (the openai and azure providers);
//   .../messages           Anthropic's Messages events (message_start, a text block, message_delta, message_stop);
//   .../responses          OpenAI's Responses API events (created, a message item, completed);
//   ...:streamGenerateContent?alt=sse  Gemini's GenerateContentResponse records (CRLF-separated);
//   .../converse-stream    Bedrock's ConverseStream events in AWS's binary event stream.
// The shapes are the documented ones, as the tests' fakes (packages/adapters-models/test/fakes/)
// give them, reduced to one text answer: what a provider's client must parse to yield its first
// text. A provider added to bench/providers.mjs whose format is not here adds one entry to
// FORMATS (its path, its answer, the marker of its first text).
import { createServer } from 'node:http';

export const WORDS = 20;
const words = Array.from({ length: WORDS }, (_, i) => `word${i} `);
const sse = (res, events) => {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const [name, data] of events) res.write(`${name ? `event: ${name}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
  res.end();
};

function openaiChat(res, body) {
  const base = { id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 0, model: body.model };
  const chunk = (delta, finish_reason = null) => [undefined, { ...base, choices: [{ index: 0, delta, finish_reason }] }];
  sse(res, [
    chunk({ role: 'assistant', content: '' }),
    ...words.map((content) => chunk({ content })),
    chunk({}, 'stop'),
    [undefined, { ...base, choices: [], usage: { prompt_tokens: 10, completion_tokens: WORDS, total_tokens: 10 + WORDS } }],
    [undefined, '[DONE]'],
  ]);
}

function anthropic(res, body) {
  const usage = { input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  sse(res, [
    [
      'message_start',
      {
        type: 'message_start',
        message: { id: 'msg_bench', type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } },
      },
    ],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
    ['ping', { type: 'ping' }],
    ...words.map((text) => ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }]),
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { ...usage, output_tokens: WORDS } }],
    ['message_stop', { type: 'message_stop' }],
  ]);
}

function responses(res, body) {
  let sequence = 0;
  const event = (type, fields) => [type, { type, sequence_number: sequence++, ...fields }];
  const response = (status, extra = {}) => ({
    id: 'resp_bench',
    object: 'response',
    created_at: 0,
    status,
    error: null,
    incomplete_details: null,
    model: body.model,
    output: [],
    usage: null,
    ...extra,
  });
  const item = { id: 'msg_bench', type: 'message', status: 'in_progress', role: 'assistant', content: [] };
  const at = { item_id: item.id, output_index: 0, content_index: 0 };
  const part = (text) => ({ type: 'output_text', annotations: [], logprobs: [], text });
  const text = words.join('');
  const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: WORDS, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 10 + WORDS };
  sse(res, [
    event('response.created', { response: response('in_progress') }),
    event('response.in_progress', { response: response('in_progress') }),
    event('response.output_item.added', { output_index: 0, item }),
    event('response.content_part.added', { ...at, part: part('') }),
    ...words.map((delta) => event('response.output_text.delta', { ...at, delta, logprobs: [] })),
    event('response.output_text.done', { ...at, text, logprobs: [] }),
    event('response.content_part.done', { ...at, part: part(text) }),
    event('response.output_item.done', { output_index: 0, item: { ...item, status: 'completed', content: [part(text)] } }),
    event('response.completed', { response: response('completed', { usage }) }),
  ]);
}

function gemini(res) {
  const usage = (n) => ({ promptTokenCount: 10, candidatesTokenCount: n, totalTokenCount: 10 + n });
  const frame = (candidate, n) => [undefined, { candidates: [{ index: 0, ...candidate }], usageMetadata: usage(n), modelVersion: 'bench-model', responseId: 'bench' }];
  // Gemini separates its SSE records with CRLF CRLF.
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const records = words.map((text, i) => frame({ content: { parts: [{ text }], role: 'model' }, ...(i === WORDS - 1 ? { finishReason: 'STOP' } : {}) }, i + 1));
  for (const [, data] of records) res.write(`data: ${JSON.stringify(data)}\r\n\r\n`);
  res.end();
}

// AWS's event stream framing (application/vnd.amazon.eventstream): prelude (total and headers
// lengths, their CRC32), string headers, the JSON payload, the message's CRC32.
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (bytes) => {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
};
function eventMessage(eventType, payload) {
  const headers = Buffer.concat(
    Object.entries({ ':event-type': eventType, ':content-type': 'application/json', ':message-type': 'event' }).flatMap(([name, value]) => {
      const head = Buffer.alloc(4 + name.length);
      head.writeUInt8(name.length, 0);
      head.write(name, 1, 'utf8');
      head.writeUInt8(7, 1 + name.length);
      head.writeUInt16BE(Buffer.byteLength(value), 2 + name.length);
      return [head, Buffer.from(value, 'utf8')];
    }),
  );
  const body = Buffer.from(JSON.stringify(payload), 'utf8');
  const total = 12 + headers.length + body.length + 4;
  const message = Buffer.alloc(total);
  message.writeUInt32BE(total, 0);
  message.writeUInt32BE(headers.length, 4);
  message.writeUInt32BE(crc32(message.subarray(0, 8)), 8);
  headers.copy(message, 12);
  body.copy(message, 12 + headers.length);
  message.writeUInt32BE(crc32(message.subarray(0, total - 4)), total - 4);
  return message;
}

function bedrock(res) {
  res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
  const events = [
    ['messageStart', { role: 'assistant' }],
    ...words.map((text) => ['contentBlockDelta', { contentBlockIndex: 0, delta: { text } }]),
    ['contentBlockStop', { contentBlockIndex: 0 }],
    ['messageStop', { stopReason: 'end_turn' }],
    ['metadata', { usage: { inputTokens: 10, outputTokens: WORDS, totalTokens: 10 + WORDS }, metrics: { latencyMs: 1 } }],
  ];
  for (const [type, payload] of events) res.write(eventMessage(type, payload));
  res.end();
}

/** Each format: whether a request path is its, its answer, and a text found in the first body chunk that carries answer text. */
export const FORMATS = {
  'openai-chat': { path: /\/chat\/completions(\?|$)/, answer: openaiChat, marker: '"content":"word' },
  anthropic: { path: /\/messages$/, answer: anthropic, marker: '"text_delta"' },
  responses: { path: /\/responses$/, answer: responses, marker: 'response.output_text.delta' },
  'bedrock-converse': { path: /\/converse-stream$/, answer: bedrock, marker: '"text":"word' },
  gemini: { path: /:streamGenerateContent\?alt=sse$/, answer: gemini, marker: '"text":"word' },
};

export function startProviderFakes() {
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => {
      const format = Object.values(FORMATS).find((f) => f.path.test(req.url ?? ''));
      if (req.method !== 'POST' || !format) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
        return;
      }
      format.answer(res, raw ? JSON.parse(raw) : {});
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${server.address().port}`, close: () => server.close() })));
}

if (process.send) {
  const { url } = await startProviderFakes();
  process.send({ url });
  process.on('disconnect', () => process.exit(0));
}
