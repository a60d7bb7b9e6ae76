import { describe, expect, it } from "vitest";
import { linkAction } from "./links";

const here = "http://skald-ab12.localhost:7878/";

describe("linkAction", () => {
  it("opens the file route's files in the viewer", () => {
    expect(linkAction("/api/file?path=%2Fhome%2Fme%2Fnotes.md", here)).toEqual({ kind: "file", path: "/home/me/notes.md" });
  });
  it("opens the desktop app's file scheme in the viewer", () => {
    expect(linkAction("skald-file://localhost/?path=%2Fa%2Fb.md", "tauri://localhost/")).toEqual({ kind: "file", path: "/a/b.md" });
    expect(linkAction("http://skald-file.localhost/?path=C%3A%5Cx.md", "http://tauri.localhost/")).toEqual({ kind: "file", path: "C:\\x.md" });
  });
  it("sends other sites to a new tab, protocol-relative ones included", () => {
    expect(linkAction("https://example.org/a", here)).toEqual({ kind: "external", url: "https://example.org/a" });
    expect(linkAction("//evil.example/login", here)).toEqual({ kind: "external", url: "http://evil.example/login" });
  });
  it("never navigates the app to its own other pages or odd schemes", () => {
    expect(linkAction("/settings", here)).toEqual({ kind: "block" });
    expect(linkAction("../x", here)).toEqual({ kind: "block" });
    expect(linkAction("javascript:alert(1)", here)).toEqual({ kind: "block" });
    expect(linkAction("data:text/html,hi", here)).toEqual({ kind: "block" });
    expect(linkAction("/api/file?nopath=1", here)).toEqual({ kind: "block" });
  });
  it("leaves in-document anchors to the browser", () => {
    expect(linkAction("#section-2", here)).toEqual({ kind: "anchor" });
  });
});
