// A small unbounded async queue: producers push, one or more async iterators
// pull; `end()` finishes the iteration after the buffered items, `fail()`
// after them with an error.

export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private readonly waiters: Array<{ resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void }> = [];
  private done = false;
  private error: unknown = undefined;
  private failed = false;

  get size(): number {
    return this.items.length;
  }

  get closed(): boolean {
    return this.done;
  }

  push(item: T): void {
    if (this.done) return;
    const waiter = this.waiters.shift();
    if (waiter) {
      waiter.resolve({ value: item, done: false });
    } else {
      this.items.push(item);
    }
  }

  end(): void {
    if (this.done) return;
    this.done = true;
    this.flush();
  }

  fail(err: unknown): void {
    if (this.done) return;
    this.done = true;
    this.failed = true;
    this.error = err;
    this.flush();
  }

  private flush(): void {
    while (this.waiters.length > 0 && this.items.length === 0) {
      const waiter = this.waiters.shift()!;
      if (this.failed) {
        waiter.reject(this.error);
      } else {
        waiter.resolve({ value: undefined, done: true });
      }
    }
  }

  next(): Promise<IteratorResult<T>> {
    if (this.items.length > 0) {
      return Promise.resolve({ value: this.items.shift()!, done: false });
    }
    if (this.done) {
      return this.failed ? Promise.reject(this.error) : Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return { next: () => this.next() };
  }
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve();
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
