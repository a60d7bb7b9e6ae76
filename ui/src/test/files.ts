// Files as a person pastes, drops or chooses them (jsdom has no DataTransfer): images with
// real bytes, and the clipboard or drag that carries them.

/** A real 3×2 PNG. */
export const PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAMAAAACCAYAAACddGYaAAAAEUlEQVR4nGM4ISf3H4YZkDkAmxUME7OZWHkAAAAASUVORK5CYII=";

export function pngFile(name = "shot.png"): File {
  const bin = atob(PNG_BASE64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return new File([bytes], name, { type: "image/png" });
}

/** A file that claims `size` bytes without holding them (a size check reads no bytes). */
export function hugeFile(name: string, size: number, type = "image/png"): File {
  const f = new File([new Uint8Array(8)], name, { type });
  Object.defineProperty(f, "size", { value: size });
  return f;
}

/** What a paste or a drop carries: files, and text when `text` is given. */
export function transfer(files: File[], text?: string): DataTransfer {
  const types = [...(text != null ? ["text/plain"] : []), ...(files.length > 0 ? ["Files"] : [])];
  return {
    types,
    files: Object.assign([...files], { item: (i: number) => files[i] ?? null }) as unknown as FileList,
    items: files.map((f) => ({ kind: "file", type: f.type, getAsFile: () => f })) as unknown as DataTransferItemList,
    getData: (type: string) => (type === "text/plain" ? (text ?? "") : ""),
    dropEffect: "none",
  } as unknown as DataTransfer;
}

/** Fires a clipboard or drag event carrying `data`; answers whether it was left to the browser. */
export function fire(el: Element, type: "paste" | "dragenter" | "dragover" | "dragleave" | "drop", data: DataTransfer): boolean {
  const ev = new Event(type, { bubbles: true, cancelable: true });
  Object.defineProperty(ev, type === "paste" ? "clipboardData" : "dataTransfer", { value: data });
  return el.dispatchEvent(ev);
}
