// uPlot, loaded when a chart is first drawn (it stays out of the app's start-up bundle).
import type uPlot from "uplot";

let loading: Promise<typeof uPlot> | null = null;

/**
 * uPlot's constructor. uPlot builds an `Intl.NumberFormat` for `navigator.language` as it
 * loads; WebKit reports the POSIX locale (`LANG=C`) as the language "C", which Intl refuses
 * with a RangeError, so such a language is replaced by "en-US" first.
 */
export function loadUplot(): Promise<typeof uPlot> {
  if (!loading) {
    try {
      new Intl.NumberFormat(navigator.language);
    } catch {
      Object.defineProperty(navigator, "language", { configurable: true, get: () => "en-US" });
    }
    loading = import("uplot").then((m) => m.default);
    loading.catch(() => (loading = null));
  }
  return loading;
}
