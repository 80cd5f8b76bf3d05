import type { ChatModel } from '../agent/chat-model.js';
import { PlatformError } from '../errors.js';
import { IMAGE_TYPES, sniffImageType } from '../image-types.js';
import { decodeDataUrl, fetchBytes } from '../net/fetch-bytes.js';
import type { GuardedFetch } from '../net/guarded-fetch.js';
import type { CompletionMessage } from '../schemas/completions.js';

/** An image of the request, fetched or decoded and checked. */
export interface LoadedImage {
  /** Told by the bytes: `image/png`, `image/jpeg`, `image/gif` or `image/webp`. */
  readonly mediaType: string;
  /** The bytes, base64. */
  readonly data: string;
}

/** How large the images of a completion may be (`AgentOptions.images`). */
export interface ImageLimits {
  /** Most bytes of one image, decoded. Default 5 MiB (`DEFAULT_IMAGE_LIMITS`). */
  readonly maxImageBytes?: number;
  /** Most bytes of all the images of one request together, decoded. Default 20 MiB. */
  readonly maxRequestBytes?: number;
  /** Time to fetch one image URL, ms. Default 10,000. */
  readonly fetchTimeoutMs?: number;
  /** How the operator sets each limit, named in the 413 (e.g. `--max-image-bytes`). Default `agent.images.<member>`. */
  readonly hints?: { readonly maxImageBytes?: string; readonly maxRequestBytes?: string };
}

export const DEFAULT_IMAGE_LIMITS = { maxImageBytes: 5 * 1024 * 1024, maxRequestBytes: 20 * 1024 * 1024, fetchTimeoutMs: 10_000 } as const;

/** Where each image part of the request is: its path for messages (`messages.0.content.1.image_url.url`) and its URL. */
export function imageParts(messages: readonly CompletionMessage[]): { path: string; url: string }[] {
  return messages.flatMap((m, i) =>
    m.role === 'user' && Array.isArray(m.content) ? m.content.flatMap((p, j) => (p.type === 'image_url' ? [{ path: `messages.${i}.content.${j}.image_url.url`, url: p.image_url.url }] : [])) : [],
  );
}

/** A 400 naming the part. */
const refuse = (path: string, message: string) => PlatformError.invalid(`${path}: ${message}`, [{ path: path.split('.'), code: 'custom', message }]);

/** Refuses images for a model that cannot take them, naming the provider and model. */
export function checkImageCapability(model: ChatModel, modelName: string, parts: readonly { path: string }[]): void {
  const first = parts[0];
  if (first && !model.capabilities?.images) {
    throw refuse(first.path, `provider ${model.provider} (model ${modelName}) cannot take images: send text only, or use a model that takes images`);
  }
}

/**
 * The images of a request, by URL (each URL fetched or decoded once): `data:` URLs decoded,
 * `https:`/`http:` URLs fetched through the guarded fetch (the outbound policy's refusal, a 400
 * naming the address, passes as it is). Each must be PNG, JPEG, GIF or WebP by its bytes and
 * within the limits (413 naming the setting); a URL that cannot be read is a 400 naming it.
 */
export async function loadImages(
  parts: readonly { path: string; url: string }[],
  options: { fetch: GuardedFetch; limits: ImageLimits | undefined; signal?: AbortSignal | undefined },
): Promise<Map<string, LoadedImage>> {
  const limits = { ...DEFAULT_IMAGE_LIMITS, ...options.limits };
  const hint = (member: 'maxImageBytes' | 'maxRequestBytes') => options.limits?.hints?.[member] ?? `agent.images.${member}`;
  const images = new Map<string, LoadedImage>();
  let total = 0;
  for (const { path, url } of parts) {
    if (images.has(url)) continue;
    const tooLarge = () =>
      new PlatformError('payload_too_large', `${path}: the image is larger than ${limits.maxImageBytes} bytes, the limit of one image (${hint('maxImageBytes')})`, {
        details: { limitBytes: limits.maxImageBytes, setting: hint('maxImageBytes') },
      });
    const bytes = /^data:/i.test(url)
      ? decodeDataUrl(url, path)
      : await fetchBytes(url, path, options, { maxBytes: limits.maxImageBytes, fetchTimeoutMs: limits.fetchTimeoutMs, what: 'image', accept: IMAGE_TYPES.join(', ') }, tooLarge);
    if (bytes.byteLength > limits.maxImageBytes) throw tooLarge();
    total += bytes.byteLength;
    if (total > limits.maxRequestBytes) {
      throw new PlatformError('payload_too_large', `${path}: the request's images are larger than ${limits.maxRequestBytes} bytes together, the limit of one request (${hint('maxRequestBytes')})`, {
        details: { limitBytes: limits.maxRequestBytes, setting: hint('maxRequestBytes') },
      });
    }
    const mediaType = sniffImageType(bytes);
    if (!mediaType) throw refuse(path, `not an image of a supported type (${IMAGE_TYPES.join(', ')}), judged by its bytes`);
    images.set(url, { mediaType, data: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64') });
  }
  return images;
}
