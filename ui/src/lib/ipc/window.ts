import { getCurrentWindow } from "@tauri-apps/api/window";

/** Sets the page's and the native window's title (the OS shows the latter in its task switcher). */
export async function setWindowTitle(title: string): Promise<void> {
  document.title = title;
  try {
    await getCurrentWindow().setTitle(title);
  } catch {
    // Outside the app (unit tests, a plain browser) there is no native window.
  }
}
