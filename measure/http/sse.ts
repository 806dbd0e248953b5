import { TextDecoder } from "node:util";

/**
 * Splits a server-sent-events byte stream into `data:` payloads; tolerant of any chunking, CRLF and
 * comment lines. Scans with indexOf, not regular expressions: it runs once per streamed chunk.
 */
export class SseParser {
  private buffer = "";
  private pendingCr = false;
  private readonly decoder: TextDecoder | null;

  /**
   * `bytesAsLatin1`: one character per byte, no UTF-8 decoding. The load's parser uses it: it only
   * asks whether a chunk has text and reads ASCII numbers, both the same in either decoding, and a
   * TextDecoder per request costs more than the rest of the parse.
   */
  constructor(bytesAsLatin1 = false) {
    this.decoder = bytesAsLatin1 ? null : new TextDecoder();
  }

  /** Feeds bytes, returns the complete `data:` payloads found (without the prefix). */
  push(chunk: Uint8Array | string): string[] {
    let text =
      typeof chunk === "string"
        ? chunk
        : this.decoder === null
          ? Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString("latin1")
          : this.decoder.decode(chunk, { stream: true });
    if (this.pendingCr) {
      text = `\r${text}`;
      this.pendingCr = false;
    }
    if (text.indexOf("\r") !== -1) {
      // A CR at the end may be the first half of a CRLF: keep it for the next push.
      if (text.endsWith("\r")) {
        this.pendingCr = true;
        text = text.slice(0, -1);
      }
      text = text.replace(/\r\n?/g, "\n");
    }
    const buf = this.buffer + text;
    const out: string[] = [];
    let start = 0;
    for (let end = buf.indexOf("\n\n"); end !== -1; end = buf.indexOf("\n\n", start)) {
      const event = buf.slice(start, end);
      start = end + 2;
      if (event.startsWith("data: ") && event.indexOf("\n") === -1) out.push(event.slice(6));
      else {
        const data: string[] = [];
        for (const line of event.split("\n"))
          if (line.startsWith("data:")) data.push(line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5));
        if (data.length > 0) out.push(data.join("\n"));
      }
    }
    this.buffer = start === 0 ? buf : buf.slice(start);
    return out;
  }
}
