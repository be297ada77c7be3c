import { listen } from "@tauri-apps/api/event";
import { call } from "./journal";

/** What the app sends when closing the window waits for a confirmation (src-tauri/src/quit.rs). */
export interface QuitRequest {
  running: number;
}

/** Calls `onAsk` whenever a close is held back because tasks run; resolves with an unsubscribe. */
export async function onQuitRequested(onAsk: (req: QuitRequest) => void): Promise<() => void> {
  try {
    return await listen<QuitRequest>("bosun://quit-requested", (e) => onAsk(e.payload));
  } catch {
    // Outside the app (unit tests, a plain browser) nothing asks.
    return () => {};
  }
}

/** Interrupts the running tasks cleanly and quits the app. */
export function quitApp(): Promise<void> {
  return call("quit_app");
}

/** Keeps the app open; the next close asks again. */
export function cancelQuit(): Promise<void> {
  return call("cancel_quit");
}
