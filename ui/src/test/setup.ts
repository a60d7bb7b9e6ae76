// Set up once for every UI unit test (vite.config.ts `test.setupFiles`): React's act()
// environment, and what jsdom lacks.

// Tests drive React through act(): this tells React to expect it.
(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

if (typeof globalThis.ResizeObserver === "undefined") {
  globalThis.ResizeObserver = class {
    observe() {}
    unobserve() {}
    disconnect() {}
  } as unknown as typeof ResizeObserver;
}

// jsdom lays nothing out: give every element a size so the virtualised message list
// renders its rows.
Element.prototype.getBoundingClientRect = function () {
  return { x: 0, y: 0, top: 0, left: 0, bottom: 800, right: 1000, width: 1000, height: 800, toJSON: () => ({}) } as DOMRect;
};
for (const prop of ["offsetHeight", "clientHeight"] as const) {
  Object.defineProperty(HTMLElement.prototype, prop, { configurable: true, get: () => 800 });
}
Object.defineProperty(HTMLElement.prototype, "offsetWidth", { configurable: true, get: () => 1000 });

// The palette keeps its chosen row in sight.
Element.prototype.scrollIntoView ??= function () {};

// Object URLs of images (jsdom has none): a URL of its own for each blob.
if (typeof URL.createObjectURL !== "function") {
  let n = 0;
  URL.createObjectURL = () => `blob:skald-test/${++n}`;
  URL.revokeObjectURL = () => {};
}
