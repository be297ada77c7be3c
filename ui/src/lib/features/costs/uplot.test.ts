import { describe, expect, it, vi } from "vitest";
import { loadUplot } from "./uplot";

vi.mock("uplot", () => ({ default: class {} }));

describe("loading uPlot", () => {
  it("replaces a language Intl refuses (WebKit's 'C' under LANG=C) before uPlot reads it", async () => {
    Object.defineProperty(navigator, "language", { configurable: true, get: () => "C" });
    expect(() => new Intl.NumberFormat(navigator.language)).toThrow(RangeError);
    const U = await loadUplot();
    expect(typeof U).toBe("function");
    expect(navigator.language).toBe("en-US");
  });
});
