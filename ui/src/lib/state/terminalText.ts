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
  /** Lines dropped from the start to keep the tail within a cap (`appendCapped`). */
  readonly dropped?: number;
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
    dropped: term.dropped,
  };
}

/**
 * Like `appendOutput`, keeping only the last `maxLines` lines in memory: older ones are dropped
 * (counted in `dropped`) a tenth of the cap at a time, so a chatty command is not copied per chunk.
 */
export function appendCapped(
  term: TerminalText,
  stream: OutputStream,
  chunk: string,
  maxLines: number,
): TerminalText {
  const next = appendOutput(term, stream, chunk);
  const over = next.lines.length - maxLines;
  if (over < Math.max(1, Math.ceil(maxLines / 10))) return next;
  next.lines.splice(0, over);
  return { ...next, dropped: (next.dropped ?? 0) + over };
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
