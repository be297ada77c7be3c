/** The colour theme: follow the system, or force light or dark (kept in the webview's storage). */
export type Theme = "system" | "light" | "dark";

const KEY = "bosun.theme";

export function savedTheme(): Theme {
  const t = localStorage.getItem(KEY);
  return t === "light" || t === "dark" ? t : "system";
}

/** The system's preference, watched so "system" follows it live. */
const systemDark = typeof window.matchMedia === "function" ? window.matchMedia("(prefers-color-scheme: dark)") : null;
let chosen: Theme = "system";
systemDark?.addEventListener("change", () => {
  if (chosen === "system") show("system");
});

function show(theme: Theme): void {
  const dark = theme === "dark" || (theme === "system" && systemDark?.matches === true);
  document.documentElement.dataset.theme = dark ? "dark" : "light";
}

/** Applies `theme` to the document (app.css has one palette per `data-theme`) and remembers it. */
export function applyTheme(theme: Theme): void {
  chosen = theme;
  show(theme);
  if (theme === "system") localStorage.removeItem(KEY);
  else localStorage.setItem(KEY, theme);
}
