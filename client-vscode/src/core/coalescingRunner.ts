// Serializes server (re)starts: one at a time, and requests that arrive while one is already
// waiting share it (an interpreter change plus a settings change must not start three servers). Pure.

export class CoalescingRunner {
    private tail: Promise<void> = Promise.resolve();
    private waiting: Promise<void> | undefined;

    constructor(private readonly task: () => Promise<void>) {}

    request(): Promise<void> {
        if (this.waiting !== undefined) {
            return this.waiting;
        }
        const run = this.tail.then(async () => {
            this.waiting = undefined; // from now on a new request queues behind this run
            await this.task();
        });
        this.waiting = run;
        this.tail = run.catch(() => undefined);
        return run;
    }
}
