import * as assert from 'assert';
import { mergeStatus, parseServerStatus, shortDevice, statusView } from '../../src/core/status';

const ready = { state: 'ready' as const, device: 'CPU: Intel(R) Xeon(R) Platinum', tensorflow: '2.21.0', message: null };

describe('statusView', () => {
    it('shows the benchmark device while ready, full name in the tooltip', () => {
        const v = statusView({ phase: 'running', server: ready, workspaceTrusted: true, interpreter: '/env/bin/python', python: '3.11.7' });
        assert.strictEqual(v.text, '$(check) tfperf: CPU');
        assert.match(v.tooltip, /Benchmark device: CPU: Intel\(R\) Xeon\(R\) Platinum/);
        assert.match(v.tooltip, /Python: `\/env\/bin\/python` \(3\.11\.7\)/);
        assert.strictEqual(v.severity, 'normal');
    });

    it('says which device is configured until the server has probed one', () => {
        const v = statusView({ phase: 'running', server: { ...ready, device: null }, workspaceTrusted: true, configuredDevice: 'gpu:0' });
        assert.strictEqual(v.text, '$(check) tfperf');
        assert.match(v.tooltip, /not probed yet \(tfperf.benchmark.device: gpu:0\)/);
    });

    it('says "benchmarking on <device>" during a benchmark', () => {
        const v = statusView({ phase: 'running', server: { ...ready, state: 'benchmarking' }, workspaceTrusted: true });
        assert.strictEqual(v.text, '$(loading~spin) tfperf: benchmarking on CPU');
    });

    it('says "hints only" when the server has no TensorFlow', () => {
        const v = statusView({ phase: 'running', server: { ...ready, device: null, tensorflow: null }, workspaceTrusted: true });
        assert.strictEqual(v.text, '$(check) tfperf: hints only');
        assert.match(v.tooltip, /benchmarks are unavailable/);
    });

    it('marks Restricted Mode with a shield and explains it', () => {
        const v = statusView({ phase: 'running', server: ready, workspaceTrusted: false });
        assert.strictEqual(v.text, '$(check) tfperf: CPU $(shield)');
        assert.match(v.tooltip, /benchmarks are disabled until you trust this folder/);
    });

    it('flags setup problems and failures with warning/error colours', () => {
        assert.strictEqual(statusView({ phase: 'needsSetup', workspaceTrusted: true, detail: 'x' }).severity, 'warning');
        assert.strictEqual(statusView({ phase: 'failed', workspaceTrusted: true }).severity, 'error');
        assert.strictEqual(statusView({ phase: 'running', server: { ...ready, state: 'error' }, workspaceTrusted: true }).severity, 'error');
    });
});

describe('shortDevice', () => {
    it('keeps the device kind of "KIND: name" and trims long bare names', () => {
        assert.strictEqual(shortDevice('GPU:0: NVIDIA A100'), 'GPU');
        assert.strictEqual(shortDevice('cpu'), 'cpu');
        assert.strictEqual(shortDevice('a very long device name without a colon'), 'a very long device …');
    });
});

describe('parseServerStatus', () => {
    it('accepts the contract shape and rejects unknown states', () => {
        assert.deepStrictEqual(parseServerStatus({ state: 'analyzing', device: '', tensorflow: '2.21.0' }), { state: 'analyzing', device: null, tensorflow: '2.21.0', message: null });
        assert.strictEqual(parseServerStatus({ state: 'sleeping' }), undefined);
        assert.strictEqual(parseServerStatus(null), undefined);
    });
});

describe('mergeStatus', () => {
    it('keeps the known device and TensorFlow version when a later status sends null', () => {
        const later = { state: 'benchmarking' as const, device: null, tensorflow: null, message: null };
        assert.deepStrictEqual(mergeStatus(ready, later, '2.21.0'), { ...later, device: ready.device, tensorflow: '2.21.0' });
    });

    it("takes check_env's TensorFlow version when the server never sent one", () => {
        const first = { state: 'ready' as const, device: null, tensorflow: null, message: null };
        assert.strictEqual(mergeStatus(undefined, first, '2.21.0').tensorflow, '2.21.0');
        assert.strictEqual(mergeStatus(undefined, first, null).tensorflow, null);
    });

    it('lets new non-null values win', () => {
        const gpu = { state: 'ready' as const, device: 'GPU:0: A100', tensorflow: '2.22.0', message: null };
        assert.deepStrictEqual(mergeStatus(ready, gpu, '2.21.0'), gpu);
    });
});
