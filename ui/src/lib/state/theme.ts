/** The colour theme: follow the system, or force light or dark (kept in the webview's storage). */
export type Theme = "system" | "light" | "dark";

const KEY = "bosun.theme";

export function savedTheme(): Theme {
  const t = localStorage.getItem(KEY);
  return t === "light" || t === "dark" ? t : "system";
}

/** Applies `theme` to the document (app.css reads `data-theme`) and remembers it. */
export function applyTheme(theme: Theme): void {
  if (theme === "system") {
    delete document.documentElement.dataset.theme;
    localStorage.removeItem(KEY);
  } else {
    document.documentElement.dataset.theme = theme;
    localStorage.setItem(KEY, theme);
  }
}
