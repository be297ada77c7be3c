import { invoke } from "@tauri-apps/api/core";

/**
 * Opens the system's folder picker (tauri-plugin-dialog, `dialog:allow-open` only); resolves
 * with the chosen folder, or null when the user cancels.
 */
export async function pickFolder(title: string, defaultPath?: string): Promise<string | null> {
  const options: Record<string, unknown> = { directory: true, multiple: false, title };
  if (defaultPath) options.defaultPath = defaultPath;
  const picked = await invoke<string | string[] | null>("plugin:dialog|open", { options });
  return Array.isArray(picked) ? (picked[0] ?? null) : picked;
}

/**
 * Opens the system's save dialog (needs `dialog:allow-save`); resolves with the chosen path, or
 * null when the user cancels.
 */
export async function pickSavePath(title: string, defaultPath?: string): Promise<string | null> {
  const options: Record<string, unknown> = { title };
  if (defaultPath) options.defaultPath = defaultPath;
  return invoke<string | null>("plugin:dialog|save", { options });
}

/**
 * Opens the system's file picker (`dialog:allow-open`); resolves with the chosen file, or null
 * when the user cancels. `extensions` filters what it offers.
 */
export async function pickFile(title: string, extensions: string[] = []): Promise<string | null> {
  const options: Record<string, unknown> = { directory: false, multiple: false, title };
  if (extensions.length > 0) options.filters = [{ name: title, extensions }];
  const picked = await invoke<string | string[] | null>("plugin:dialog|open", { options });
  return Array.isArray(picked) ? (picked[0] ?? null) : picked;
}
