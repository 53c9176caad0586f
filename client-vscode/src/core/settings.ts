// VS Code `tfperf.*` settings -> the server's initializationOptions / `tfperf` configuration section
// (docs/contract.md, "initializationOptions"). Pure: the caller passes a reader over the settings.
// Defaults, ranges and allowed values come from package.json's contributes.configuration, which is
// generated from the server's tfperf_lsp/settings_schema.py.
import * as manifest from '../../package.json';

export type Severity = 'off' | 'error' | 'warning' | 'information' | 'hint';
export type LogLevel = 'error' | 'warning' | 'info' | 'debug';

export interface ServerSettings {
    workspaceTrusted: boolean;
    rules: Record<string, Severity>;
    inlayHints: boolean;
    codeLens: boolean;
    lintOnChange: boolean;
    logLevel: LogLevel;
    benchmark: {
        timeBudget: number;
        timeout: number;
        device: string;
        maxInputMB: number;
        memoryLimitMB: number;
        workerCommand: string[];
    };
}

/** Reads one setting below `tfperf.` (e.g. "benchmark.device"); undefined when unset. */
export type SettingReader = (key: string) => unknown;

export interface MappedSettings {
    settings: ServerSettings;
    /** Human-readable complaints about values that were replaced by defaults. */
    problems: string[];
}

/** What package.json says about one setting (VS Code enforces its type, minimum, maximum and enum). */
export interface ContributedSetting {
    type?: string;
    default?: unknown;
    minimum?: number;
    maximum?: number;
    enum?: string[];
    pattern?: string;
}

const CONTRIBUTED = manifest.contributes.configuration.properties as Record<string, ContributedSetting>;

/** A `tfperf.*` setting as package.json contributes it. package.json's configuration is generated from
 * tfperf_lsp/settings_schema.py, so defaults and ranges here are the server's: none are written in this file. */
export function contributed(key: string): ContributedSetting {
    const setting = CONTRIBUTED[`tfperf.${key}`];
    if (setting === undefined) {
        throw new Error(`tfperf.${key} is not contributed in package.json`);
    }
    return setting;
}

function defaultOf<T>(key: string): T {
    return structuredClone(contributed(key).default) as T;
}

export const DEFAULTS: Omit<ServerSettings, 'workspaceTrusted'> = {
    rules: defaultOf('rules'),
    inlayHints: defaultOf('inlayHints'),
    codeLens: defaultOf('codeLens'),
    lintOnChange: defaultOf('lintOnChange'),
    logLevel: defaultOf('logLevel'),
    benchmark: {
        timeBudget: defaultOf('benchmark.timeBudget'),
        timeout: defaultOf('benchmark.timeout'),
        device: defaultOf('benchmark.device'),
        maxInputMB: defaultOf('benchmark.maxInputMB'),
        memoryLimitMB: defaultOf('benchmark.memoryLimitMB'),
        workerCommand: defaultOf('benchmark.workerCommand'),
    },
};

const SEVERITY_ALIASES: Record<string, Severity> = {
    off: 'off', none: 'off', false: 'off',
    error: 'error',
    warning: 'warning', warn: 'warning',
    information: 'information', info: 'information',
    hint: 'hint',
};

const LOG_LEVELS = contributed('logLevel').enum as readonly LogLevel[];

const DEVICE_PATTERN = new RegExp(contributed('benchmark.device').pattern ?? '^(auto|cpu|gpu(:[0-9]+)?)$');

/** "auto", "cpu", "gpu:N"; a bare "gpu" means the first GPU (as the server's settings_schema.normalize_device). */
export function normalizeDevice(value: unknown): string | undefined {
    if (typeof value !== 'string') {
        return undefined;
    }
    const v = value.trim().toLowerCase();
    if (!DEVICE_PATTERN.test(v)) {
        return undefined;
    }
    return v === 'gpu' ? 'gpu:0' : v;
}

export function toServerSettings(read: SettingReader, workspaceTrusted: boolean): MappedSettings {
    const problems: string[] = [];

    // The range is package.json's (the server's, from settings_schema.py): out of range is clamped to the
    // nearest bound and reported, as the server does.
    const number = (key: string, fallback: number): number => {
        const raw = read(key);
        if (raw === undefined || raw === null) {
            return fallback;
        }
        if (typeof raw !== 'number' || !Number.isFinite(raw)) {
            problems.push(`tfperf.${key} must be a number; using ${fallback}.`);
            return fallback;
        }
        const { minimum, maximum } = contributed(key);
        if (minimum !== undefined && raw < minimum) {
            problems.push(`tfperf.${key} = ${raw} is below the minimum ${minimum}; using ${minimum}.`);
            return minimum;
        }
        if (maximum !== undefined && raw > maximum) {
            problems.push(`tfperf.${key} = ${raw} is above the maximum ${maximum}; using ${maximum}.`);
            return maximum;
        }
        return raw;
    };

    const bool = (key: string, fallback: boolean): boolean => {
        const raw = read(key);
        if (raw === undefined || raw === null) {
            return fallback;
        }
        if (typeof raw !== 'boolean') {
            problems.push(`tfperf.${key} must be true or false; using ${fallback}.`);
            return fallback;
        }
        return raw;
    };

    const rules: Record<string, Severity> = { ...DEFAULTS.rules };
    const rawRules = read('rules');
    if (rawRules !== undefined && rawRules !== null) {
        if (typeof rawRules !== 'object' || Array.isArray(rawRules)) {
            problems.push('tfperf.rules must be an object such as {"TFP101": "off"}; ignoring it.');
        } else {
            for (const [code, value] of Object.entries(rawRules as Record<string, unknown>)) {
                if (value === true) {
                    continue; // `true` = on, with the rule's default severity
                }
                const severity = value === false ? 'off' : SEVERITY_ALIASES[String(value).trim().toLowerCase()];
                if (severity === undefined) {
                    problems.push(`tfperf.rules.${code}: "${String(value)}" is not one of off, error, warning, information, hint; ignoring it.`);
                    continue;
                }
                rules[code.trim().toUpperCase()] = severity;
            }
        }
    }

    let logLevel = DEFAULTS.logLevel;
    const rawLevel = read('logLevel');
    if (rawLevel !== undefined && rawLevel !== null) {
        const level = String(rawLevel).toLowerCase() === 'warn' ? 'warning' : String(rawLevel).toLowerCase();
        if ((LOG_LEVELS as readonly string[]).includes(level)) {
            logLevel = level as LogLevel;
        } else {
            problems.push(`tfperf.logLevel "${String(rawLevel)}" is not one of ${LOG_LEVELS.join(', ')}; using ${DEFAULTS.logLevel}.`);
        }
    }

    let device = DEFAULTS.benchmark.device;
    const rawDevice = read('benchmark.device');
    if (rawDevice !== undefined && rawDevice !== null && rawDevice !== '') {
        const normalized = normalizeDevice(rawDevice);
        if (normalized === undefined) {
            problems.push(`tfperf.benchmark.device "${String(rawDevice)}" is not auto, cpu or gpu:N; using auto.`);
        } else {
            device = normalized;
        }
    }

    let workerCommand: string[] = [...DEFAULTS.benchmark.workerCommand];
    const rawCommand = read('benchmark.workerCommand');
    if (rawCommand !== undefined && rawCommand !== null) {
        if (Array.isArray(rawCommand) && rawCommand.every((part) => typeof part === 'string')) {
            workerCommand = (rawCommand as string[]).filter((part) => part.trim() !== '');
        } else {
            problems.push('tfperf.benchmark.workerCommand must be a list of strings, e.g. ["ssh", "gpu-box", "python3"]; ignoring it.');
        }
    }

    return {
        settings: {
            workspaceTrusted,
            rules,
            inlayHints: bool('inlayHints', DEFAULTS.inlayHints),
            codeLens: bool('codeLens', DEFAULTS.codeLens),
            lintOnChange: bool('lintOnChange', DEFAULTS.lintOnChange),
            logLevel,
            benchmark: {
                timeBudget: number('benchmark.timeBudget', DEFAULTS.benchmark.timeBudget),
                timeout: number('benchmark.timeout', DEFAULTS.benchmark.timeout),
                device,
                maxInputMB: number('benchmark.maxInputMB', DEFAULTS.benchmark.maxInputMB),
                memoryLimitMB: number('benchmark.memoryLimitMB', DEFAULTS.benchmark.memoryLimitMB),
                workerCommand,
            },
        },
        problems,
    };
}

/** Settings whose change needs a new server process; everything else is sent live. */
export const RESTART_SETTINGS: readonly string[] = ['tfperf.interpreter', 'tfperf.importStrategy'];
