import { useEffect, useState } from 'preact/hooks';
import { type Api, fillPath, messageOf } from '../../api/client';
import { useApi } from '../../api/context';
import { formatBytes } from '../../components/format';

/** The image types the service takes (it tells them by their bytes; the picker offers these). */
export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;

/**
 * An image of a user message as shown: what it is and, where this page has its bytes, a `blob:`
 * URL of them (the CSP allows `blob:` images, made by the page itself, and nothing else).
 */
export interface ShownImage {
  /** The file's name, when the image was attached in this page. */
  readonly name?: string;
  readonly mediaType: string;
  readonly bytes: number;
  /** The stored image's SHA-256 (hex), as the chat's history names it. */
  readonly ref?: string;
  /** The chat that keeps it (a stored image): where its bytes are fetched from. */
  readonly chatId?: string;
  readonly url?: string;
}

/** An image attached to the question being written: shown, and sent as a `data:` URL. */
export interface Attachment extends ShownImage {
  readonly url: string;
  readonly dataUrl: string;
}

/**
 * `blob:` URLs of images by their SHA-256 (the ref a chat's history names them by; one URL serves
 * every chat that has those bytes): those this page sent, and stored ones fetched once with the
 * key (an `<img>` cannot send the Authorization header). A failed fetch is forgotten, so the
 * next showing tries again.
 */
const urls = new Map<string, Promise<string>>();

/** The `blob:` URL of a stored image of the chat, fetched with the key the first time. */
function storedUrl(api: Api, chatId: string, ref: string): Promise<string> {
  let url = urls.get(ref);
  if (!url) {
    url = api.fetch('get', fillPath('/api/chats/{chatId}/images/{ref}', { chatId, ref })).then(async (res) => URL.createObjectURL(await res.blob()));
    url.catch(() => urls.delete(ref));
    urls.set(ref, url);
  }
  return url;
}

const hex = (digest: ArrayBuffer) => Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');

const dataUrlOf = (file: Blob) =>
  new Promise<string>((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error('The file could not be read'));
    reader.readAsDataURL(file);
  });

/**
 * A picked or pasted file as an attachment. Its bytes are remembered under their SHA-256 where the
 * page can hash (`crypto.subtle`: a secure context, e.g. https or localhost).
 */
export async function attach(file: File): Promise<Attachment> {
  const url = URL.createObjectURL(file);
  if (globalThis.crypto?.subtle) urls.set(hex(await crypto.subtle.digest('SHA-256', await file.arrayBuffer())), Promise.resolve(url));
  return { name: file.name || 'pasted image', mediaType: file.type, bytes: file.size, url, dataUrl: await dataUrlOf(file) };
}

/** The image files of a paste or a drop (other items are left to the browser). */
export const imageFiles = (data: DataTransfer | null): File[] => Array.from(data?.files ?? []).filter((f) => f.type.startsWith('image/'));

/** A stored image of the chat's history: shown from its bytes, fetched from the chat (`ImageList`). */
export const storedImage = (part: { ref: string; mediaType: string; bytes: number }, chatId: string): ShownImage => ({ ref: part.ref, chatId, mediaType: part.mediaType, bytes: part.bytes });

/** What an image is, in words: `photo.png, PNG, 1.2 kB`. */
export const describe = (image: ShownImage) => [image.name, image.mediaType.replace(/^image\//, '').toUpperCase(), formatBytes(image.bytes)].filter(Boolean).join(', ');

/** A user message's images: each as a thumbnail (a stored one once its bytes are fetched), or described until then or when they cannot be. */
export function ImageList({ images, onRemove }: { images: readonly ShownImage[]; onRemove?: (index: number) => void }) {
  if (images.length === 0) return null;
  return (
    <ul class="images" aria-label="Images">
      {images.map((image, i) => (
        <li key={image.url ?? image.ref ?? i}>
          <Thumbnail image={image} index={i} />
          {onRemove ? (
            <button type="button" class="link" aria-label={`Remove image ${i + 1}`} onClick={() => onRemove(i)}>
              Remove
            </button>
          ) : null}
        </li>
      ))}
    </ul>
  );
}

function Thumbnail({ image, index }: { image: ShownImage; index: number }) {
  const api = useApi();
  const [url, setUrl] = useState(image.url);
  const [problem, setProblem] = useState<string>();
  useEffect(() => {
    if (image.url || !image.ref || !image.chatId) return;
    let live = true;
    storedUrl(api, image.chatId, image.ref).then(
      (u) => live && setUrl(u),
      (e) => live && setProblem(messageOf(e)),
    );
    return () => {
      live = false;
    };
  }, [api, image.url, image.ref, image.chatId]);
  if (url) return <img src={url} alt={describe(image)} />;
  return (
    <span class="image-ref" title={problem ? `Not shown: ${problem}` : undefined}>
      Image {index + 1}: {describe(image)}
      {problem ? ` (not shown: ${problem})` : null}
    </span>
  );
}
