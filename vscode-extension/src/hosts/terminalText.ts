// Terminal output: text collected from a stream of unknown size (a terminal's output) with a memory bound: the
// head and the tail are kept, the middle is counted. Pure.

export class BoundedText {
  private head = '';
  private tail = '';
  private dropped = 0;
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
    this.tail += piece;
    if (this.tail.length > half) {
      this.dropped += this.tail.length - half;
      this.tail = this.tail.slice(this.tail.length - half);
    }
  }

  /** Characters seen in all. */
  get length(): number {
    return this.total;
  }

  get truncated(): boolean {
    return this.dropped > 0;
  }

  toString(): string {
    if (this.dropped === 0) return this.head + this.tail;
    return `${this.head}\n… [${this.dropped} characters of output not kept] …\n${this.tail}`;
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
