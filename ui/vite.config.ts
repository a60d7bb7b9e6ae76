import { defineConfig } from "vitest/config";
import react from "@vitejs/plugin-react";

export default defineConfig({
  base: "/",
  plugins: [react()],
  build: {
    outDir: "dist",
    // pdf.js is large by nature; it is loaded once and cached.
    chunkSizeWarningLimit: 1500,
    // No inline scripts or data: modules: the server's CSP is script-src 'self'.
    modulePreload: { polyfill: false },
  },
  server: {
    // `npm run dev` against a local `skald serve` (its default port).
    proxy: {
      "/api": { target: "http://127.0.0.1:7878", ws: true, changeOrigin: false },
    },
  },
  test: {
    environment: "jsdom",
    include: ["src/**/*.test.ts", "src/**/*.test.tsx"],
    // One setup for every test: act(), and what jsdom lacks (src/test/; the fake
    // transport and shell are there too).
    setupFiles: ["src/test/setup.ts"],
  },
});
