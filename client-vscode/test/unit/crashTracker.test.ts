import * as assert from 'assert';
import { CrashTracker } from '../../src/core/crashTracker';

describe('CrashTracker', () => {
    it('restarts up to maxRestarts times inside the window, then stops', () => {
        let now = 0;
        const tracker = new CrashTracker(3, 60_000, () => now);
        const decisions = [0, 1000, 2000, 3000].map((t) => { now = t; return tracker.recordCrash(); });
        assert.deepStrictEqual(decisions.map((d) => d.restart), [true, true, true, false]);
        assert.strictEqual(decisions[3].crashes, 4);
    });

    it('forgets crashes older than the window', () => {
        let now = 0;
        const tracker = new CrashTracker(1, 60_000, () => now);
        assert.strictEqual(tracker.recordCrash().restart, true);
        now = 61_000;
        assert.strictEqual(tracker.recordCrash().restart, true);
        now = 62_000;
        assert.strictEqual(tracker.recordCrash().restart, false);
    });

    it('a deliberate restart (reset) starts counting again', () => {
        const tracker = new CrashTracker(1, 60_000, () => 0);
        tracker.recordCrash();
        assert.strictEqual(tracker.recordCrash().restart, false);
        tracker.reset();
        assert.strictEqual(tracker.recordCrash().restart, true);
    });
});
