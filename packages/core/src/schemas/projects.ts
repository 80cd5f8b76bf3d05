import { z } from 'zod';
import { offsetPaging, Timestamp } from './common.js';

export const Provider = z.enum(['openai', 'ollama', 'local']).describe('Model provider of the agent');

const name = z.string().trim().min(1).max(200);
const model = z.string().trim().min(1).max(200);
const description = z.string().max(2000);
const icon = z.string().max(200);
const color = z.string().max(50).describe('Colour code, e.g. #3b82f6');

export const CreateProjectRequest = z.object({
  name,
  model,
  provider: Provider,
  description: description.optional(),
  icon: icon.optional(),
  color: color.optional(),
});
export type CreateProjectRequest = z.input<typeof CreateProjectRequest>;

export const UpdateProjectRequest = z
  .object({
    name: name.optional(),
    model: model.optional(),
    provider: Provider.optional(),
    description: description.optional(),
    icon: icon.optional(),
    color: color.optional(),
  })
  .strict()
  .refine((patch) => Object.values(patch).some((v) => v !== undefined), {
    message: 'at least one field to change is required',
  });
export type UpdateProjectRequest = z.input<typeof UpdateProjectRequest>;

export const Project = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    icon: z.string(),
    color: z.string(),
    model: z.string(),
    provider: Provider,
    createdAt: Timestamp,
    updatedAt: Timestamp,
  });
export type Project = z.output<typeof Project>;

export const ProjectResponse = z.object({ success: z.literal(true), project: Project });
export type ProjectResponse = z.output<typeof ProjectResponse>;


export const ListProjectsQuery = z.object({
  searchWord: z.string().max(200).optional().describe('Case-insensitive part of the name'),
  ...offsetPaging,
  cursor: z.string().max(500).optional().describe('nextCursor of the previous page; takes precedence over offset'),
});
export type ListProjectsQuery = z.input<typeof ListProjectsQuery>;

export const ListProjectsResponse = z.object({
  success: z.literal(true),
  projects: z.array(Project),
  nextCursor: z.string().describe('Cursor of the next page; empty when there is none'),
  nextOffset: z.number().int().describe('Offset of the next page'),
  hasMore: z.boolean(),
  total: z.number().int().describe('Projects matching searchWord'),
  message: z.string(),
});
export type ListProjectsResponse = z.output<typeof ListProjectsResponse>;
