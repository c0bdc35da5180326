// The batch `gds records import` is filling, held as the request body's JSON bytes in one Buffer that is
// reused from batch to batch, outside V8's heap.
//
// Why not an array of row objects: a batch (10,000 rows) lives across many of V8's young-generation
// collections while it fills, so every collection copied it (and then promoted it), and V8 grows its young
// generation by the bytes that survive, summed over the run: the longer the import, the bigger the heap
// (new space 16 -> 128 MiB, peak RSS 98 -> 208 MiB from 10,000 to 200,000 rows). Written as bytes here, a row
// leaves nothing on the heap for a collection to copy but its place (row, line, id for bulk-update).
import { JsonBody } from '../client/transport.js';

export interface BatchRow {
  /** 1-based row of the input. */
  row: number;
  /** 1-based line of the input where the row starts, when the format has lines. */
  line?: number;
  /** The record id a bulk-update item updates (none: it creates). */
  id?: string;
}

const INITIAL_BYTES = 1 << 20;
const CLOSE = Buffer.from(']}');

export class BatchBuffer {
  private bytes = Buffer.allocUnsafe(INITIAL_BYTES);
  /** Bytes of the prefix and the items, each item followed by a comma. */
  private used: number;
  private readonly prefixBytes: number;
  private count = 0;
  /**
   * Per item, in typed arrays made once (their memory is outside the heap too): where it starts in `bytes`
   * (item i spans starts[i] to starts[i + 1], its comma included), its row and its line (0: none).
   */
  private readonly starts: Float64Array;
  private readonly rows: Float64Array;
  private readonly lines: Float64Array;
  /** The ids of bulk-update items that have one (index -> id): absent for an upsert. */
  private ids = new Map<number, string>();

  /** `prefix` opens the body up to the array's bracket (`{"rows":[`); `capacity`: the most items it holds. */
  constructor(prefix: string, capacity: number) {
    this.used = this.bytes.write(prefix, 0, 'utf8');
    this.prefixBytes = this.used;
    this.starts = new Float64Array(capacity);
    this.rows = new Float64Array(capacity);
    this.lines = new Float64Array(capacity);
  }

  get length(): number {
    return this.count;
  }

  get full(): boolean {
    return this.count >= this.rows.length;
  }

  /** Bytes the body would have with these items (the closing brackets included). */
  get byteLength(): number {
    return this.used + 1;
  }

  /** Whether any item creates a record (has no id). */
  get creates(): boolean {
    return this.ids.size < this.count;
  }

  place(index: number): BatchRow | undefined {
    if (index < 0 || index >= this.count) return undefined;
    const line = this.lines[index] ?? 0;
    const id = this.ids.get(index);
    return { row: this.rows[index] ?? 0, ...(line > 0 ? { line } : {}), ...(id === undefined ? {} : { id }) };
  }

  indexOfId(id: string): number {
    for (const [index, value] of this.ids) if (value === id) return index;
    return -1;
  }

  /** Appends an item: `json` is its JSON text. */
  push(json: string, place: BatchRow): void {
    if (this.full) throw new Error('BatchBuffer: full');
    const size = Buffer.byteLength(json, 'utf8') + 1;
    this.reserve(size + CLOSE.length);
    if (this.count > 0) this.bytes[this.used - 1] = 0x2c; // undoes body()'s closing bracket
    const index = this.count;
    this.starts[index] = this.used;
    this.rows[index] = place.row;
    this.lines[index] = place.line ?? 0;
    if (place.id !== undefined) this.ids.set(index, place.id);
    this.used += this.bytes.write(json, this.used, 'utf8');
    this.bytes[this.used] = 0x2c; // ,
    this.used += 1;
    this.count += 1;
  }

  /** Drops item `index` (one the service refused), the others kept in order. */
  remove(index: number): void {
    if (index < 0 || index >= this.count) return;
    const start = this.starts[index] ?? 0;
    const end = index + 1 < this.count ? (this.starts[index + 1] ?? this.used) : this.used;
    const size = end - start;
    this.bytes.copy(this.bytes, start, end, this.used);
    this.used -= size;
    for (let i = index; i + 1 < this.count; i += 1) {
      this.starts[i] = (this.starts[i + 1] ?? 0) - size;
      this.rows[i] = this.rows[i + 1] ?? 0;
      this.lines[i] = this.lines[i + 1] ?? 0;
    }
    const ids = new Map<number, string>();
    for (const [at, id] of this.ids) if (at !== index) ids.set(at > index ? at - 1 : at, id);
    this.ids = ids;
    this.count -= 1;
  }

  /**
   * The request body: the prefix, the items, `]}`. A view of the buffer, valid until the batch changes (the
   * request is answered before it does).
   */
  body(): JsonBody {
    if (this.count === 0) {
      this.reserve(CLOSE.length);
      CLOSE.copy(this.bytes, this.used);
      return new JsonBody(this.bytes.subarray(0, this.used + CLOSE.length));
    }
    // Over the last item's comma; a later push writes its own comma back first.
    CLOSE.copy(this.bytes, this.used - 1);
    return new JsonBody(this.bytes.subarray(0, this.used + 1));
  }

  /** Empties the batch, keeping its memory. */
  clear(): void {
    this.used = this.prefixBytes;
    this.count = 0;
    if (this.ids.size > 0) this.ids = new Map();
  }

  private reserve(more: number): void {
    if (this.used + more <= this.bytes.length) return;
    let size = this.bytes.length * 2;
    while (size < this.used + more) size *= 2;
    const grown = Buffer.allocUnsafe(size);
    this.bytes.copy(grown, 0, 0, this.used);
    this.bytes = grown;
  }
}
