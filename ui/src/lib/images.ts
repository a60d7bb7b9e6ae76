// Images in the composer and the chat (docs/images.md): which files may be attached, how
// a file becomes what `attach_image` takes, and each kept image's bytes as an object URL,
// fetched once (`get_image`) for as long as the app runs.

import type { ChatImage } from "../protocol";
import type { Transport } from "../transport";
import { escapeControlsInline } from "./visible";

/** The formats every provider takes; the file input's `accept`. */
export const IMAGE_TYPES = ["image/png", "image/jpeg", "image/webp", "image/gif"] as const;

/** The largest image the engine keeps (`skald_llm::vision::MAX_INPUT_BYTES`). */
export const MAX_IMAGE_BYTES = 30 * 1024 * 1024;

const MIB = 1024 * 1024;

/**
 * Why a file cannot be attached, said before it is read: too large, or named as another
 * kind of file. A file of no known type (an odd extension) goes to the engine, which
 * reads its bytes and refuses it if it is not an image.
 */
export function refusal(file: { name: string; size: number; type: string }): string | null {
  const name = file.name ? escapeControlsInline(file.name) : "The image";
  if (file.size > MAX_IMAGE_BYTES) {
    return `${name} is too large to attach (${(file.size / MIB).toFixed(1)} MB; an image may be at most ${MAX_IMAGE_BYTES / MIB} MB).`;
  }
  if (file.type !== "" && !(IMAGE_TYPES as readonly string[]).includes(file.type)) {
    return `${name} cannot be attached: only PNG, JPEG, WebP and GIF images can.`;
  }
  return null;
}

/** A file's bytes as base64 (no `data:` prefix), as `attach_image` takes them. */
export function fileBase64(file: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => {
      const url = String(reader.result);
      resolve(url.slice(url.indexOf(",") + 1));
    };
    reader.onerror = () => reject(reader.error ?? new Error("the file could not be read"));
    reader.readAsDataURL(file);
  });
}

/**
 * The image files a paste carries, or none when it carries text too: a spreadsheet's cells
 * come as text and as a picture of them, and the text is what was meant.
 */
export function pastedImages(data: DataTransfer | null): File[] {
  if (!data) return [];
  if (data.types.includes("text/plain") && data.getData("text/plain") !== "") return [];
  return filesOf(data).filter((f) => f.type.startsWith("image/"));
}

/** The files a drop or a paste carries (a browser may list them in `items` only). */
export function filesOf(data: DataTransfer | null): File[] {
  if (!data) return [];
  if (data.files && data.files.length > 0) return [...data.files];
  const out: File[] = [];
  for (const item of data.items ? [...data.items] : []) {
    if (item.kind !== "file") continue;
    const f = item.getAsFile();
    if (f) out.push(f);
  }
  return out;
}

/** Whether a drag carries files (its contents are hidden until the drop). */
export function dragHasFiles(data: DataTransfer | null): boolean {
  return !!data && [...data.types].includes("Files");
}

/**
 * "screenshot.png", or what it is when it had no name: "PNG image, 1280×720". A name is
 * whoever attached it's data: its control and bidi characters show as escapes.
 */
export function imageLabel(image: ChatImage): string {
  return image.name ? escapeControlsInline(image.name) : `${formatOf(image.media_type)} image, ${image.width}×${image.height}`;
}

/** A file's name as shown while it is attached (escaped like `imageLabel`). */
export function fileLabel(name: string): string {
  return name ? escapeControlsInline(name) : "image";
}

function formatOf(mediaType: string): string {
  const sub = mediaType.replace(/^image\//, "");
  return sub === "jpeg" ? "JPEG" : sub === "webp" ? "WebP" : sub.toUpperCase();
}

/** The size a thumbnail is laid out at before it loads (so rows do not jump): at most `box`. */
export function thumbSize(image: ChatImage, box: { width: number; height: number }): { width: number; height: number } {
  const w = Math.max(1, image.width);
  const h = Math.max(1, image.height);
  const scale = Math.min(1, box.width / w, box.height / h);
  return { width: Math.max(16, Math.round(w * scale)), height: Math.max(16, Math.round(h * scale)) };
}

// ---- the bytes, once per image --------------------------------------------------------

/** Per transport (one in the app; one per test), the object URL of each image by SHA-256. */
const urls = new WeakMap<Transport, Map<string, Promise<string>>>();

/**
 * An object URL of a kept image's bytes. Asked for once; the URL lives as long as the app
 * (a chat shows the same image again when scrolled back to, or reopened). A failure is
 * not kept, so the next showing asks again.
 */
export function imageUrl(t: Transport, sha256: string): Promise<string> {
  let cache = urls.get(t);
  if (!cache) {
    cache = new Map();
    urls.set(t, cache);
  }
  const known = cache.get(sha256);
  if (known) return known;
  const made = t.call({ cmd: "get_image", sha256 }).then((r) => URL.createObjectURL(new Blob([base64Bytes(r.data)], { type: r.media_type })));
  cache.set(sha256, made);
  made.catch(() => cache.delete(sha256));
  return made;
}

/** Remembers the URL of a file just attached, so its thumbnail needs no `get_image`. */
export function rememberImageUrl(t: Transport, sha256: string, file: Blob) {
  let cache = urls.get(t);
  if (!cache) {
    cache = new Map();
    urls.set(t, cache);
  }
  if (!cache.has(sha256)) cache.set(sha256, Promise.resolve(URL.createObjectURL(file)));
}

function base64Bytes(data: string): Uint8Array<ArrayBuffer> {
  const bin = atob(data);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}
