// Images in the chat (docs/images.md): a message's or a tool call's thumbnails, each a
// button that opens the image whole in a lightbox, and the thumbnail the composer shows for
// an attachment. The bytes come from `get_image`, once per image (lib/images.ts).

import { useEffect, useId, useRef, useState } from "react";
import { createPortal } from "react-dom";
import type { ChatImage } from "../protocol";
import { useTransport } from "../app/context";
import { imageLabel, imageUrl, thumbSize } from "../lib/images";
import { Icon } from "./ui";

const THUMB = { width: 220, height: 140 };

/** An image's object URL, once fetched; `error` when it could not be. */
export function useImageUrl(sha256: string): { url: string | null; error: boolean } {
  const t = useTransport();
  const [state, setState] = useState<{ sha: string; url: string | null; error: boolean }>({ sha: sha256, url: null, error: false });
  useEffect(() => {
    let live = true;
    imageUrl(t, sha256).then(
      (url) => live && setState({ sha: sha256, url, error: false }),
      () => live && setState({ sha: sha256, url: null, error: true }),
    );
    return () => {
      live = false;
    };
  }, [t, sha256]);
  return state.sha === sha256 ? state : { url: null, error: false };
}

/** The picture itself, laid out at its thumbnail size before it loads. */
export function ImageThumb({ image, box = THUMB }: { image: ChatImage; box?: { width: number; height: number } }) {
  const { url, error } = useImageUrl(image.sha256);
  const size = thumbSize(image, box);
  if (error) {
    return (
      <span className="image-thumb image-missing" style={size} title="The image could not be loaded">
        <Icon name="image" />
      </span>
    );
  }
  return url ? (
    <img className="image-thumb" src={url} alt={imageLabel(image)} style={size} draggable={false} />
  ) : (
    <span className="image-thumb image-loading" style={size} aria-hidden="true" />
  );
}

/** A message's or a tool call's images: thumbnails that open the image whole. */
export function ImageStrip({ images, label }: { images: ChatImage[]; label: string }) {
  const [open, setOpen] = useState<number | null>(null);
  const buttons = useRef<(HTMLButtonElement | null)[]>([]);
  if (images.length === 0) return null;
  const shown = open != null ? images[open] : undefined;
  return (
    <div className="image-strip" data-testid="image-strip" role="group" aria-label={label}>
      {images.map((image, i) => (
        <button
          key={`${image.sha256}-${i}`}
          ref={(el) => {
            buttons.current[i] = el;
          }}
          type="button"
          className="image-button"
          data-testid="chat-image"
          data-sha256={image.sha256}
          aria-label={`Open ${imageLabel(image)}`}
          title={`${imageLabel(image)} — ${image.width}×${image.height}`}
          onClick={() => setOpen(i)}
        >
          <ImageThumb image={image} />
        </button>
      ))}
      {shown && open != null && (
        <Lightbox
          image={shown}
          onClose={() => {
            const back = buttons.current[open];
            setOpen(null);
            back?.focus();
          }}
        />
      )}
    </div>
  );
}

/**
 * The image whole, over the app: Escape, the close button or a click beside the image
 * close it. In a portal: the chat's rows are moved with transforms, which would pin a
 * fixed overlay to the row.
 */
export function Lightbox({ image, onClose }: { image: ChatImage; onClose: () => void }) {
  const { url, error } = useImageUrl(image.sha256);
  const closeRef = useRef<HTMLButtonElement>(null);
  const titleId = useId();
  useEffect(() => {
    closeRef.current?.focus();
  }, []);
  return createPortal(
    <div
      className="overlay lightbox-overlay"
      onMouseDown={(e) => {
        if (e.target === e.currentTarget) onClose();
      }}
    >
      <div
        className="lightbox"
        role="dialog"
        aria-modal="true"
        aria-labelledby={titleId}
        data-testid="lightbox"
        onKeyDown={(e) => {
          if (e.key === "Escape") {
            e.preventDefault();
            e.stopPropagation();
            onClose();
          } else if (e.key === "Tab") {
            // The close button is all there is to focus.
            e.preventDefault();
            closeRef.current?.focus();
          }
        }}
      >
        <div className="lightbox-head">
          <span id={titleId} className="lightbox-title">
            {imageLabel(image)}
          </span>
          <span className="muted small">
            {image.width}×{image.height}
          </span>
          <button ref={closeRef} type="button" className="icon-btn" data-testid="lightbox-close" aria-label="Close (Esc)" title="Close (Esc)" onClick={onClose}>
            <Icon name="close" />
          </button>
        </div>
        {error ? (
          <div className="error-text">The image could not be loaded.</div>
        ) : url ? (
          <img className="lightbox-image" src={url} alt={imageLabel(image)} />
        ) : (
          <div className="muted small">Loading…</div>
        )}
      </div>
    </div>,
    document.body,
  );
}
