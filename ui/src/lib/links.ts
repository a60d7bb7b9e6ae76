// What a click on a link in rendered Markdown (a chat answer, a viewed file) may do. The
// HTML is sanitised by the server, but links stay links: one must never take the app's
// own tab somewhere else (a look-alike login page), however it is written — absolute,
// protocol-relative (`//host/…`) or relative.

export type LinkAction =
  | { kind: "file"; path: string } // open it in the viewer
  | { kind: "external"; url: string } // open it in a new browser tab
  | { kind: "anchor" } // a jump within the document: the browser's default
  | { kind: "block" }; // nothing

export function linkAction(href: string, here: string): LinkAction {
  if (href.startsWith("#")) return { kind: "anchor" };
  let url: URL;
  try {
    url = new URL(href, here);
  } catch {
    return { kind: "block" };
  }
  // The desktop app's file scheme (WebKitGTK and WKWebView name it, WebView2 makes it
  // a host): files for the viewer, whichever page is showing the link.
  if (url.protocol === "skald-file:" || url.host === "skald-file.localhost") {
    const path = url.searchParams.get("path");
    return path ? { kind: "file", path } : { kind: "block" };
  }
  if (url.origin === new URL(here).origin) {
    if (url.pathname === "/api/file") {
      const path = url.searchParams.get("path");
      return path ? { kind: "file", path } : { kind: "block" };
    }
    return { kind: "block" };
  }
  if (url.protocol === "http:" || url.protocol === "https:" || url.protocol === "mailto:") {
    return { kind: "external", url: url.href };
  }
  return { kind: "block" };
}

/** Applies `linkAction` to a click inside rendered Markdown. */
export function onMarkdownClick(e: { target: EventTarget | null; preventDefault: () => void }, openFile: (path: string) => void): void {
  const a = (e.target as HTMLElement | null)?.closest?.("a");
  if (!a) return;
  const action = linkAction(a.getAttribute("href") ?? "", window.location.href);
  if (action.kind === "anchor") return;
  e.preventDefault();
  if (action.kind === "file") openFile(action.path);
  else if (action.kind === "external") window.open(action.url, "_blank", "noopener,noreferrer");
}
