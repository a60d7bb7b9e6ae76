// How the chat header's menus close (the model picker, the sandbox badge, the context
// meter): a click outside, focus moving elsewhere (Tab away), or Escape, which also hands
// the focus back (`onEscape` says where). Spread `wrapProps` on the element holding the
// button and its menu.

import { useEffect, useRef } from "react";

export function useMenuDismiss(open: boolean, setOpen: (open: boolean) => void, onEscape: () => void) {
  const wrapRef = useRef<HTMLDivElement>(null);
  const setOpenRef = useRef(setOpen);
  setOpenRef.current = setOpen;

  // A click outside closes the menu (focus may not move: most of the page takes none).
  useEffect(() => {
    if (!open) return;
    const onDown = (e: PointerEvent) => {
      if (!wrapRef.current?.contains(e.target as Node | null)) setOpenRef.current(false);
    };
    document.addEventListener("pointerdown", onDown);
    return () => document.removeEventListener("pointerdown", onDown);
  }, [open]);

  const wrapProps = {
    ref: wrapRef,
    onBlur: (e: React.FocusEvent<HTMLDivElement>) => {
      // Close when focus moves elsewhere (Tab away); not when it merely drops to the page.
      const to = e.relatedTarget as Node | null;
      if (to && !e.currentTarget.contains(to)) setOpen(false);
    },
    onKeyDown: (e: React.KeyboardEvent<HTMLDivElement>) => {
      if (e.key === "Escape" && open) {
        e.stopPropagation();
        onEscape();
      }
    },
  };
  return { wrapRef, wrapProps };
}
