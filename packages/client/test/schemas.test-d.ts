// Checked by `pnpm typecheck` (tsc), not run: the client's hand-written types are exactly what
// the server's zod schemas accept and answer, and with them OpenAI's types (as
// `@agent-platform/client/openai` extends them, which this program includes) name every member
// the schemas have. A schema change that the client does not follow fails here.
import type {
  ToolStepCall as CallSchema,
  ChatCompletionChunk,
  ChatCompletionRequest,
  ChatCompletionResponse,
  ToolStepProgress as ProgressSchema,
  ToolStepResult as ResultSchema,
  CompletionSource as SourceSchema,
} from '@agent-platform/core/schemas';
import type * as OpenAI from 'openai/resources/chat/completions/completions';
import type { z } from 'zod';
import type { CompletionChunkFields, CompletionFields, CompletionMessageFields, CompletionRequestFields, CompletionSource, ToolStepCall, ToolStepProgress, ToolStepResult } from '../src/index.js';
import type {} from '../src/openai.js';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Expect<T extends true> = T;

/** The request's members (the schema is a loose object: its input type also has an index signature). */
type RequestMembers = z.input<z.ZodObject<(typeof ChatCompletionRequest)['shape']>>;

export type Checks = [
  Expect<Equal<CompletionSource, z.output<typeof SourceSchema>>>,
  Expect<Equal<ToolStepCall, z.output<typeof CallSchema>>>,
  Expect<Equal<ToolStepResult, z.output<typeof ResultSchema>>>,
  Expect<Equal<ToolStepProgress, z.output<typeof ProgressSchema>>>,
  // Each member of ours has the schema's type ...
  Expect<Equal<CompletionRequestFields, Pick<RequestMembers, keyof CompletionRequestFields>>>,
  Expect<Equal<CompletionFields, Pick<ChatCompletionResponse, keyof CompletionFields>>>,
  Expect<Equal<CompletionChunkFields, Pick<ChatCompletionChunk, keyof CompletionChunkFields>>>,
  Expect<Equal<CompletionMessageFields, Pick<ChatCompletionResponse['choices'][number]['message'], keyof CompletionMessageFields>>>,
  Expect<Equal<CompletionMessageFields, Pick<ChatCompletionChunk['choices'][number]['delta'], keyof CompletionMessageFields>>>,
  // ... and every member of the schemas is OpenAI's or ours.
  Expect<Equal<Exclude<keyof RequestMembers, keyof OpenAI.ChatCompletionCreateParamsBase>, never>>,
  Expect<Equal<Exclude<keyof ChatCompletionResponse, keyof OpenAI.ChatCompletion>, never>>,
  Expect<Equal<Exclude<keyof ChatCompletionChunk, keyof OpenAI.ChatCompletionChunk>, never>>,
  Expect<Equal<Exclude<keyof ChatCompletionResponse['choices'][number]['message'], keyof OpenAI.ChatCompletionMessage>, never>>,
  Expect<Equal<Exclude<keyof ChatCompletionChunk['choices'][number]['delta'], keyof OpenAI.ChatCompletionChunk.Choice.Delta>, never>>,
];
