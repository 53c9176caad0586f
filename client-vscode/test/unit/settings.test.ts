import * as assert from 'assert';
import { DEFAULTS, normalizeDevice, toServerSettings } from '../../src/core/settings';

const reader = (values: Record<string, unknown>) => (key: string) => values[key];

describe('toServerSettings', () => {
    it('maps unset settings to the contract defaults and passes the trust state', () => {
        const { settings, problems } = toServerSettings(reader({}), false);
        assert.deepStrictEqual(problems, []);
        assert.deepStrictEqual(settings, { workspaceTrusted: false, ...DEFAULTS });
    });

    it('maps every setting to its initializationOptions field', () => {
        const { settings, problems } = toServerSettings(reader({
            interpreter: '/usr/bin/python3', // not a server setting: must not leak into the options
            rules: { TFP101: 'off', tfp203: 'Error', TFP301: 'info', TFP400: true, TFP401: false },
            inlayHints: false,
            codeLens: false,
            lintOnChange: false,
            logLevel: 'debug',
            'benchmark.timeBudget': 1.5,
            'benchmark.timeout': 120,
            'benchmark.device': 'GPU:1',
            'benchmark.maxInputMB': 64,
            'benchmark.memoryLimitMB': 8192,
            'benchmark.workerCommand': ['ssh', 'gpu-box', 'python3'],
        }), true);
        assert.deepStrictEqual(problems, []);
        assert.deepStrictEqual(settings, {
            workspaceTrusted: true,
            rules: { TFP101: 'off', TFP203: 'error', TFP301: 'information', TFP401: 'off' },
            inlayHints: false,
            codeLens: false,
            lintOnChange: false,
            logLevel: 'debug',
            benchmark: { timeBudget: 1.5, timeout: 120, device: 'gpu:1', maxInputMB: 64, memoryLimitMB: 8192, workerCommand: ['ssh', 'gpu-box', 'python3'] },
        });
        assert.ok(!('interpreter' in settings));
    });

    it('clamps the time budget to the server maximum and explains why', () => {
        const { settings, problems } = toServerSettings(reader({ 'benchmark.timeBudget': 60 }), true);
        assert.strictEqual(settings.benchmark.timeBudget, 10);
        assert.deepStrictEqual(problems, ['tfperf.benchmark.timeBudget = 60 is above the maximum 10; using 10.']);
    });

    it('raises a timeout below the server minimum (5 s) and says so, as the server does', () => {
        const { settings, problems } = toServerSettings(reader({ 'benchmark.timeout': 1 }), true);
        assert.strictEqual(settings.benchmark.timeout, 5);
        assert.deepStrictEqual(problems, ['tfperf.benchmark.timeout = 1 is below the minimum 5; using 5.']);
    });

    it('passes values at the bounds through unchanged', () => {
        const { settings, problems } = toServerSettings(reader({ 'benchmark.timeout': 5, 'benchmark.timeBudget': 0.2, 'benchmark.maxInputMB': 1e6 }), true);
        assert.deepStrictEqual(problems, []);
        assert.deepStrictEqual([settings.benchmark.timeout, settings.benchmark.timeBudget, settings.benchmark.maxInputMB], [5, 0.2, 1e6]);
    });

    it('replaces invalid values by defaults, one problem each', () => {
        const { settings, problems } = toServerSettings(reader({
            rules: { TFP101: 'loud' },
            logLevel: 'chatty',
            'benchmark.device': 'tpu',
            'benchmark.timeout': 'soon',
            'benchmark.workerCommand': 'ssh gpu python3',
            inlayHints: 'yes',
        }), true);
        assert.deepStrictEqual(settings.rules, {});
        assert.strictEqual(settings.logLevel, 'info');
        assert.strictEqual(settings.benchmark.device, 'auto');
        assert.strictEqual(settings.benchmark.timeout, 60);
        assert.deepStrictEqual(settings.benchmark.workerCommand, []);
        assert.strictEqual(settings.inlayHints, true);
        assert.strictEqual(problems.length, 6);
    });

    it('rejects a rules value that is not an object', () => {
        const { settings, problems } = toServerSettings(reader({ rules: ['TFP101'] }), true);
        assert.deepStrictEqual(settings.rules, {});
        assert.match(problems[0], /tfperf.rules must be an object/);
    });

    it('drops empty worker-command parts (an empty string would run nothing)', () => {
        const { settings } = toServerSettings(reader({ 'benchmark.workerCommand': ['ssh', ' ', 'gpu', ''] }), true);
        assert.deepStrictEqual(settings.benchmark.workerCommand, ['ssh', 'gpu']);
    });
});

describe('normalizeDevice', () => {
    it('accepts auto, cpu, gpu:N and reads a bare gpu as gpu:0', () => {
        assert.strictEqual(normalizeDevice('auto'), 'auto');
        assert.strictEqual(normalizeDevice(' CPU '), 'cpu');
        assert.strictEqual(normalizeDevice('gpu'), 'gpu:0');
        assert.strictEqual(normalizeDevice('gpu:3'), 'gpu:3');
        assert.strictEqual(normalizeDevice('gpu:x'), undefined);
        assert.strictEqual(normalizeDevice(0), undefined);
    });
});
