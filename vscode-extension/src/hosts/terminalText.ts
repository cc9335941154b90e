// Terminal output: text collected from a stream of unknown size (a terminal's output) with a memory bound: the
// head and the tail are kept, the middle is counted. Pure.

export class BoundedText {
  private head = '';
  /** Tail pieces; the first may start before the kept tail (trimmed when read). */
  private tail: string[] = [];
  private tailLength = 0;
  private total = 0;

  constructor(private readonly limit: number) {}

  append(piece: string): void {
    this.total += piece.length;
    const half = Math.floor(this.limit / 2);
    if (this.head.length < half) {
      const room = half - this.head.length;
      this.head += piece.slice(0, room);
      piece = piece.slice(room);
    }
    if (piece === '') return;
    this.tail.push(piece);
    this.tailLength += piece.length;
    while (this.tail.length > 1 && this.tailLength - this.tail[0].length >= half) {
      this.tailLength -= (this.tail.shift() as string).length;
    }
  }

  /** Characters seen in all. */
  get length(): number {
    return this.total;
  }

  get truncated(): boolean {
    return this.total > this.limit - (this.limit % 2);
  }

  toString(): string {
    const half = Math.floor(this.limit / 2);
    const joined = this.tail.join('');
    const tail = joined.length > half ? joined.slice(joined.length - half) : joined;
    const dropped = this.total - this.head.length - tail.length;
    if (dropped === 0) return this.head + tail;
    return `${this.head}\n… [${dropped} characters of output not kept] …\n${tail}`;
  }
}

/** Terminal output without escape sequences (colours, cursor moves, OSC titles) and carriage returns. */
export function stripTerminalControl(text: string): string {
  return text
    .replace(/\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g, '')
    .replace(/\x1b\[[0-?]*[ -/]*[@-~]/g, '')
    .replace(/\x1b[@-Z\\-_]/g, '')
    .replace(/\r\n/g, '\n')
    .replace(/\r/g, '');
}
