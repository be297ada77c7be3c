import type { OutputStream } from "../bindings/OutputStream";

/** One line of command output. */
export interface OutputLine {
  text: string;
  stderr: boolean;
}

/**
 * A command's output as lines, appended chunk by chunk. The `lines` array is shared and grows in
 * place (100k lines must not be copied on every chunk); every append returns a new wrapper so
 * Svelte sees the change.
 */
export interface TerminalText {
  readonly lines: OutputLine[];
  /** The unfinished last line of each stream (shown, but may still grow). */
  readonly partial: { stdout: string; stderr: string };
  readonly bytes: number;
}

export function emptyTerminal(): TerminalText {
  return { lines: [], partial: { stdout: "", stderr: "" }, bytes: 0 };
}

/** A carriage return redraws the line (progress bars): keep what was written last. */
function settle(line: string): string {
  const trimmed = line.endsWith("\r") ? line.slice(0, -1) : line;
  const cr = trimmed.lastIndexOf("\r");
  return cr >= 0 ? trimmed.slice(cr + 1) : trimmed;
}

export function appendOutput(
  term: TerminalText,
  stream: OutputStream,
  chunk: string,
): TerminalText {
  if (chunk.length === 0) return term;
  const stderr = stream === "stderr";
  const pieces = (term.partial[stream] + chunk).split("\n");
  const rest = pieces.pop() ?? "";
  for (const piece of pieces) term.lines.push({ text: settle(piece), stderr });
  return {
    lines: term.lines,
    partial: { ...term.partial, [stream]: rest },
    bytes: term.bytes + chunk.length,
  };
}

/** Every line including the unfinished ones, for display. */
export function lineCount(term: TerminalText): number {
  return (
    term.lines.length + (term.partial.stdout ? 1 : 0) + (term.partial.stderr ? 1 : 0)
  );
}

export function lineAt(term: TerminalText, index: number): OutputLine {
  if (index < term.lines.length) return term.lines[index];
  const extra: OutputLine[] = [];
  if (term.partial.stdout) extra.push({ text: settle(term.partial.stdout), stderr: false });
  if (term.partial.stderr) extra.push({ text: settle(term.partial.stderr), stderr: true });
  return extra[index - term.lines.length] ?? { text: "", stderr: false };
}

/** Output given whole (a tool that did not stream), as a terminal. */
export function terminalFrom(text: string): TerminalText {
  const term = appendOutput(emptyTerminal(), "stdout", text.endsWith("\n") ? text : text + "\n");
  return text.length === 0 ? emptyTerminal() : term;
}
