import * as assert from 'assert';
import { progressIncrement, progressPlace } from '../../src/core/progress';

describe('progress', () => {
    it('puts cancellable progress (benchmarks) in a notification, the rest in the status bar', () => {
        assert.strictEqual(progressPlace({ cancellable: true, title: 'Benchmarking' }), 'notification');
        assert.strictEqual(progressPlace({ cancellable: false, title: 'Analyzing' }), 'window');
        assert.strictEqual(progressPlace({ title: 'Analyzing' }), 'window');
    });

    it('turns absolute percentages into increments and never goes backwards or past 100', () => {
        assert.deepStrictEqual(progressIncrement(0, 30), { increment: 30, total: 30 });
        assert.deepStrictEqual(progressIncrement(30, 20), { increment: 0, total: 30 });
        assert.deepStrictEqual(progressIncrement(90, 150), { increment: 10, total: 100 });
        assert.deepStrictEqual(progressIncrement(40, undefined), { increment: 0, total: 40 });
    });
});
