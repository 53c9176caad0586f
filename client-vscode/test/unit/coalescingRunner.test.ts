import * as assert from 'assert';
import { CoalescingRunner } from '../../src/core/coalescingRunner';

function deferred() {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    return { promise, resolve };
}

describe('CoalescingRunner', () => {
    it('runs one task at a time and merges requests made while one waits', async () => {
        const gates = [deferred(), deferred()];
        let started = 0;
        let concurrent = 0;
        let maxConcurrent = 0;
        const runner = new CoalescingRunner(async () => {
            const gate = gates[started++];
            concurrent++;
            maxConcurrent = Math.max(maxConcurrent, concurrent);
            await gate.promise;
            concurrent--;
        });
        const first = runner.request();
        await new Promise((r) => setImmediate(r)); // first is now running
        const second = runner.request();
        const third = runner.request();
        assert.strictEqual(second, third, 'requests while one waits share the waiting run');
        gates[0].resolve();
        await first;
        gates[1].resolve();
        await second;
        assert.strictEqual(started, 2);
        assert.strictEqual(maxConcurrent, 1);
    });

    it('keeps working after a task fails', async () => {
        let calls = 0;
        const runner = new CoalescingRunner(async () => {
            calls++;
            if (calls === 1) {
                throw new Error('boom');
            }
        });
        await assert.rejects(runner.request(), /boom/);
        await runner.request();
        assert.strictEqual(calls, 2);
    });
});
