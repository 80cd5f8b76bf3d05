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
  readonly url?: string;
}

/** An image attached to the question being written: shown, and sent as a `data:` URL. */
export interface Attachment extends ShownImage {
  readonly url: string;
  readonly dataUrl: string;
}

/**
 * The images this page sent, by their SHA-256: the service keeps a chat's images by that ref and
 * its history answers the ref, not the bytes (the API serves no stored image), so a chat reopened
 * in the page that sent them shows them again; after a reload they are described only.
 */
const sent = new Map<string, string>();

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
  if (globalThis.crypto?.subtle) sent.set(hex(await crypto.subtle.digest('SHA-256', await file.arrayBuffer())), url);
  return { name: file.name || 'pasted image', mediaType: file.type, bytes: file.size, url, dataUrl: await dataUrlOf(file) };
}

/** The image files of a paste or a drop (other items are left to the browser). */
export const imageFiles = (data: DataTransfer | null): File[] => Array.from(data?.files ?? []).filter((f) => f.type.startsWith('image/'));

/** A stored image of the chat's history, with this page's copy of its bytes when it sent them. */
export const storedImage = (part: { ref: string; mediaType: string; bytes: number }): ShownImage => {
  const url = sent.get(part.ref);
  return { ref: part.ref, mediaType: part.mediaType, bytes: part.bytes, ...(url ? { url } : {}) };
};

/** What an image is, in words: `photo.png, PNG, 1.2 kB`. */
export const describe = (image: ShownImage) => [image.name, image.mediaType.replace(/^image\//, '').toUpperCase(), formatBytes(image.bytes)].filter(Boolean).join(', ');

/** A user message's images: each as a thumbnail, or described when this page does not have its bytes. */
export function ImageList({ images, onRemove }: { images: readonly ShownImage[]; onRemove?: (index: number) => void }) {
  if (images.length === 0) return null;
  return (
    <ul class="images" aria-label="Images">
      {images.map((image, i) => (
        <li key={image.url ?? image.ref ?? i}>
          {image.url ? (
            <img src={image.url} alt={describe(image)} />
          ) : (
            <span class="image-ref" title="Kept with the chat; the API does not serve stored images, so only the page that sent it shows it">
              Image {i + 1}: {describe(image)}
            </span>
          )}
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
