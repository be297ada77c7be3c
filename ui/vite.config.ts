/// <reference types="vitest/config" />
import { defineConfig } from "vite";
import { svelte } from "@sveltejs/vite-plugin-svelte";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL(".", import.meta.url));

// The UI lives in ui/ and is built into ui/dist, which the Tauri app embeds (frontendDist).
export default defineConfig({
  root,
  plugins: [svelte()],
  clearScreen: false,
  server: { port: 5173, strictPort: true, host: "127.0.0.1" },
  build: { outDir: "dist", emptyOutDir: true, target: "safari15", sourcemap: false },
  resolve: process.env.VITEST ? { conditions: ["browser"] } : undefined,
  test: {
    root,
    environment: "jsdom",
    include: ["src/**/*.test.ts"],
  },
});
