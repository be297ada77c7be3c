import { describe, expect, it } from "vitest";
import { parseAnsi, stripAnsi } from "./ansi";

describe("parseAnsi", () => {
  it("splits a line into coloured spans and resets", () => {
    const { spans } = parseAnsi("\u001b[1;31merror\u001b[0m: bad \u001b[38;5;33mthing\u001b[39m");
    expect(spans.map((s) => s.text)).toEqual(["error", ": bad ", "thing"]);
    expect(spans[0]).toMatchObject({ fg: "var(--ansi-1)", bold: true });
    expect(spans[1]).toMatchObject({ fg: null, bold: false });
    expect(spans[2].fg).toBe("rgb(0,135,255)");
  });

  it("handles truecolour, bright colours and backgrounds", () => {
    const { spans } = parseAnsi("\u001b[38;2;10;20;30;103mx");
    expect(spans[0]).toMatchObject({ fg: "rgb(10,20,30)", bg: "var(--ansi-11)" });
  });

  it("drops escape sequences that are not colours", () => {
    expect(stripAnsi("\u001b[2K\u001b[1Gdone\u001b]0;title\u0007!")).toBe("done!");
    expect(parseAnsi("\u001b[?25lok").spans.map((s) => s.text)).toEqual(["ok"]);
  });

  it("carries the style to the next line", () => {
    const first = parseAnsi("\u001b[32mgreen");
    const second = parseAnsi("still", first.end);
    expect(second.spans[0].fg).toBe("var(--ansi-2)");
  });
});
