// Decides whether a server that exited on its own gets restarted: a few retries, then stop and
// show the log instead of a crash loop. Pure; the clock is injected for tests.

export interface CrashDecision {
    restart: boolean;
    /** Crashes inside the window, counting this one. */
    crashes: number;
}

export class CrashTracker {
    private crashes: number[] = [];

    constructor(
        readonly maxRestarts = 3,
        readonly windowMs = 3 * 60 * 1000,
        private readonly now: () => number = Date.now,
    ) {}

    /** Call when the server process ended without being asked to. */
    recordCrash(): CrashDecision {
        const t = this.now();
        this.crashes = this.crashes.filter((c) => t - c <= this.windowMs);
        this.crashes.push(t);
        return { restart: this.crashes.length <= this.maxRestarts, crashes: this.crashes.length };
    }

    /** A deliberate (re)start by the user or a settings change forgives earlier crashes. */
    reset(): void {
        this.crashes = [];
    }
}
