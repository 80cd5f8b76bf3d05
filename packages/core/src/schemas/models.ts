import { z } from 'zod';

/** One agent as an OpenAI model object (`GET /api/v1/models`). */
export const ModelObject = z.object({
  id: z.string().describe('The project id: pass it as model to /api/v1/chat/completions'),
  object: z.literal('model'),
  created: z.number().int().describe('Unix time (seconds) the project was created'),
  owned_by: z.string().describe('Always agent-platform'),
  name: z.string().describe("The project's name (shown by front ends that read it, e.g. Open WebUI)"),
});
export type ModelObject = z.output<typeof ModelObject>;

/** OpenAI's model list: the caller's projects, newest first. */
export const ListModelsResponse = z.object({ object: z.literal('list'), data: z.array(ModelObject) });
export type ListModelsResponse = z.output<typeof ListModelsResponse>;
