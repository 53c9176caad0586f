// Test-only extension: drives tfperf through the VS Code API inside code-server's extension host and
// records what it saw in $TFPERF_E2E_DIR/probe.json. e2e/drive.js (the browser side) reads that file
// and answers through signal files, so UI checks and API steps do not trample each other.
const fs = require('fs');
const path = require('path');
const vscode = require('vscode');

const DIR = process.env.TFPERF_E2E_DIR;
const TIMING = /\d+(?:\.\d+)?\s*(?:ns|µs|us|ms|s)\b/;
// A measured result in the hover: the benchmark block with times, not "Benchmark: cannot benchmark ...".
const measured = (hover) => /\*\*Benchmark\*\*/.test(hover) && TIMING.test(hover.slice(hover.indexOf('**Benchmark**'))) && !/cannot benchmark|benchmark failed/i.test(hover);
const state = { phase: 'started', checks: [], notes: {} };

function save() {
    fs.writeFileSync(path.join(DIR, 'probe.json.tmp'), JSON.stringify(state, null, 2));
    fs.renameSync(path.join(DIR, 'probe.json.tmp'), path.join(DIR, 'probe.json'));
}
function phase(name, extra = {}) {
    state.phase = name;
    Object.assign(state.notes, extra);
    save();
}
function check(name, ok, detail) {
    state.checks.push({ name, ok: Boolean(ok), detail });
    save();
    return Boolean(ok);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Every wait below ends as soon as its condition holds; its bound is multiplied by this (default 3)
// so that a stalled CI machine (20x slower than usual, seen) fails only what is really broken.
const WAIT_SCALE = Number(process.env.TFPERF_E2E_WAIT_SCALE || 3);
async function waitFor(fn, timeoutMs, everyMs = 500) {
    const end = Date.now() + timeoutMs * WAIT_SCALE;
    for (;;) {
        const value = await fn();
        if (value || Date.now() > end) {
            return value;
        }
        await sleep(everyMs);
    }
}
const signal = (name, timeoutMs) => waitFor(() => fs.existsSync(path.join(DIR, `signal-${name}`)), timeoutMs, 250);

function tfperfDiagnostics(uri) {
    return vscode.languages.getDiagnostics(uri).filter((d) => d.source === 'tfperf');
}
function codeOf(d) {
    return typeof d.code === 'object' ? String(d.code.value) : String(d.code);
}
function describe(d) {
    return { code: codeOf(d), line: d.range.start.line, character: d.range.start.character, message: d.message.slice(0, 160), data: d.data };
}
async function hoverText(uri, position) {
    const hovers = (await vscode.commands.executeCommand('vscode.executeHoverProvider', uri, position)) || [];
    return hovers
        .flatMap((h) => h.contents)
        .map((c) => (typeof c === 'string' ? c : c.value))
        .join('\n')
        .replace(/&nbsp;/g, ' ');
}
/** Diagnostics stop changing for `quietMs` (the server may publish in several rounds). */
async function settledDiagnostics(uri, timeoutMs, quietMs = 3000) {
    let last = '';
    let since = Date.now();
    await waitFor(() => {
        const now = JSON.stringify(tfperfDiagnostics(uri).map(describe));
        if (now !== last) {
            last = now;
            since = Date.now();
        }
        return last !== '[]' && Date.now() - since >= quietMs;
    }, timeoutMs);
    return tfperfDiagnostics(uri);
}

async function pickFile(folder) {
    // Open every .py file; the one with both a fixable and a benchmarkable finding (most findings) wins.
    const files = fs.readdirSync(folder).filter((f) => f.endsWith('.py')).sort();
    const wanted = process.env.TFPERF_E2E_FILE;
    const candidates = wanted ? [wanted] : files;
    // As tabs: with pull diagnostics VS Code asks only for documents shown in tabs.
    for (const f of candidates) {
        const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(path.join(folder, f)));
        await vscode.window.showTextDocument(doc, { preview: false, preserveFocus: true });
    }
    const all = () => JSON.stringify(candidates.map((f) => tfperfDiagnostics(vscode.Uri.file(path.join(folder, f))).length));
    await waitFor(() => /[1-9]/.test(all()), 300000, 1000); // includes the time to install tfperf
    let last = '';
    let since = Date.now();
    await waitFor(() => {
        const now = all();
        if (now !== last) {
            last = now;
            since = Date.now();
        }
        return Date.now() - since > 5000;
    }, 60000, 500);
    const scored = candidates.map((f) => {
        const diags = tfperfDiagnostics(vscode.Uri.file(path.join(folder, f)));
        const fixable = diags.some((d) => d.data && d.data.fixable);
        const bench = diags.some((d) => d.data && d.data.benchmarkable);
        return { f, n: diags.length, score: (fixable ? 1000 : 0) + (bench ? 1000 : 0) + diags.length };
    }).sort((a, b) => b.score - a.score);
    state.notes.files = scored;
    return path.join(folder, scored[0].f);
}

/** Runs "Benchmark Finding at Cursor" on each candidate until one hover shows measured timings. */
async function benchmarkUntilMeasured(uri, editor, candidates) {
    const attempts = [];
    const timeoutMs = Number(process.env.TFPERF_E2E_BENCH_TIMEOUT || 300) * 1000;
    for (const target of candidates) {
        const pos = target.range.start.translate(0, 1);
        const hoverBefore = await hoverText(uri, pos);
        editor.selection = new vscode.Selection(target.range.start, target.range.start);
        editor.revealRange(target.range, vscode.TextEditorRevealType.InCenter);
        phase('benchmarking', { benchmarkLine: target.range.start.line, benchmarkCode: codeOf(target) });
        const started = Date.now();
        let settled = false;
        const run = Promise.resolve(vscode.commands.executeCommand('tfperf.benchmarkAtCursor')).finally(() => (settled = true));
        let hoverAfter = '';
        let settledAt;
        await waitFor(async () => {
            hoverAfter = await hoverText(uri, pos);
            settledAt = settled ? settledAt || Date.now() : undefined;
            // Done: measured, or the command finished and the hover changed (an error) or stayed put for 15 s.
            return measured(hoverAfter) || (settled && (hoverAfter !== hoverBefore || Date.now() - settledAt > 15000));
        }, timeoutMs, 2000);
        await Promise.race([run, sleep(5000)]);
        const attempt = { code: codeOf(target), line: target.range.start.line, seconds: Math.round((Date.now() - started) / 1000), ok: measured(hoverAfter), hover: hoverAfter.slice(0, 900) };
        attempts.push(attempt);
        save();
        if (attempt.ok) {
            return { attempts, success: target };
        }
    }
    return { attempts, success: undefined };
}

async function run() {
    const folder = vscode.workspace.workspaceFolders[0].uri.fsPath;
    const ext = vscode.extensions.getExtension('tfperf.tfperf');
    check('tfperf extension installed', ext !== undefined, ext && ext.packageJSON.version);
    const file = await pickFile(folder);
    check('tfperf extension active (activated by a Python file)', ext.isActive);
    const uri = vscode.Uri.file(file);
    const editor = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri), { preview: false });
    let diags = await settledDiagnostics(uri, 120000);
    check('diagnostics published', diags.length > 0, { file: path.basename(file), count: diags.length, findings: diags.map(describe) });
    check('diagnostics carry data.id (finding id)', diags.length > 0 && diags.every((d) => d.data && typeof d.data.id === 'string'));
    editor.revealRange(diags[0].range, vscode.TextEditorRevealType.InCenter);
    phase('diagnostics', { file, firstLine: diags[0].range.start.line });
    await signal('ui-squiggles', 90000);

    // Hover through the API.
    const first = diags[0];
    const hover = await hoverText(uri, first.range.start.translate(0, 1));
    check('hover on a finding', hover.length > 0 && hover.includes(codeOf(first)), hover.slice(0, 400));

    // Quick fix: resolve the quickfix actions, apply the rewrite, see the finding go away.
    const fixable = diags.find((d) => d.data && d.data.fixable);
    if (check('a fixable finding exists', fixable !== undefined)) {
        const actions = (await vscode.commands.executeCommand('vscode.executeCodeActionProvider', uri, fixable.range, vscode.CodeActionKind.QuickFix.value, 50)) || [];
        state.notes.quickFixTitles = actions.map((a) => a.title);
        const fix = actions.find((a) => a.isPreferred && a.edit) || actions.find((a) => a.edit && !/ignore|disable|docs|benchmark/i.test(a.title));
        if (check('quick fix offered with an edit', fix !== undefined, state.notes.quickFixTitles)) {
            const before = editor.document.getText();
            const code = codeOf(fixable);
            const countBefore = diags.filter((d) => codeOf(d) === code).length;
            const applied = await vscode.workspace.applyEdit(fix.edit);
            if (fix.command) {
                await vscode.commands.executeCommand(fix.command.command, ...(fix.command.arguments || []));
            }
            const after = editor.document.getText();
            check('quick fix applied (document changed)', applied && after !== before, { title: fix.title });
            const gone = await waitFor(() => tfperfDiagnostics(uri).filter((d) => codeOf(d) === code).length < countBefore, 30000);
            check('fixed finding disappears', gone, { code, before: countBefore, after: tfperfDiagnostics(uri).filter((d) => codeOf(d) === code).length });
            diags = await settledDiagnostics(uri, 30000, 2000);
        }
    }

    // Benchmark: only when the server advertises tfperf.benchmark.
    const commands = await vscode.commands.getCommands(true);
    const serverBenchmarks = commands.includes('tfperf.benchmark');
    state.notes.serverCommands = commands.filter((c) => c.startsWith('tfperf.'));
    // Some findings cannot be measured (e.g. no known input shape): try a few until one is.
    const candidates = diags.filter((d) => d.data && d.data.benchmarkable).slice(0, 4);
    if (serverBenchmarks && candidates.length > 0) {
        const { attempts, success } = await benchmarkUntilMeasured(uri, editor, candidates);
        state.notes.benchmarkAttempts = attempts;
        check('benchmark timings appear in the hover', success !== undefined, attempts[attempts.length - 1]);
        if (success) {
            editor.revealRange(success.range, vscode.TextEditorRevealType.InCenter);
            phase('benchmarked', { benchmarkLine: success.range.start.line, benchmarkCode: codeOf(success) });
            await signal('ui-benchmark-hover', 90000);
            // "tfperf: Clear Benchmark Results" forgets the result: the hover loses the timings.
            await vscode.commands.executeCommand('tfperf.clearBenchmarkResults');
            let cleared = '';
            const gone = await waitFor(async () => !measured((cleared = await hoverText(uri, success.range.start.translate(0, 1)))), 20000, 1000);
            check('Clear Benchmark Results removes the timings from the hover', gone, cleared.slice(0, 300));
        }
    } else {
        state.notes.benchmarkSkipped = serverBenchmarks ? 'no benchmarkable finding' : 'server does not register tfperf.benchmark';
        phase('benchmark-skipped');
    }

    // Cancel: start "Benchmark All Findings in File"; the driver clicks Cancel in the notification;
    // the server must stop and answer {cancelled: true}.
    if (serverBenchmarks && diags.filter((d) => d.data && d.data.benchmarkable).length > 0) {
        phase('cancel-test');
        const started = Date.now();
        const answer = await Promise.race([
            Promise.resolve(vscode.commands.executeCommand('tfperf.benchmarkAllInFile')),
            sleep(Number(process.env.TFPERF_E2E_BENCH_TIMEOUT || 300) * 1000).then(() => 'timeout'),
        ]);
        check('Cancel in the progress notification stops the benchmark', answer && answer.cancelled === true,
            { answer: JSON.stringify(answer).slice(0, 300), seconds: Math.round((Date.now() - started) / 1000), clicked: fs.existsSync(path.join(DIR, 'signal-ui-cancel-clicked')) });
    }

    // A setting applies live: turning a rule off removes its diagnostics without a server restart
    // (the extension logs "Interpreter: ..." once per start).
    const current = tfperfDiagnostics(uri);
    if (current.length > 0) {
        const code = codeOf(current[0]);
        const startsBefore = serverStarts();
        // the user's own rules (the run's settings turn TFP106 on) stay as they were around it
        const userRules = vscode.workspace.getConfiguration('tfperf').inspect('rules').globalValue;
        await vscode.workspace.getConfiguration('tfperf').update('rules', { ...(userRules || {}), [code]: 'off' }, vscode.ConfigurationTarget.Global);
        const off = await waitFor(() => !tfperfDiagnostics(uri).some((d) => codeOf(d) === code), 30000);
        check(`tfperf.rules {"${code}": "off"} removes its diagnostics`, off, { remaining: tfperfDiagnostics(uri).map(codeOf) });
        await vscode.workspace.getConfiguration('tfperf').update('rules', userRules, vscode.ConfigurationTarget.Global);
        const back = await waitFor(() => tfperfDiagnostics(uri).some((d) => codeOf(d) === code), 30000);
        check('removing the setting brings them back', back);
        check('settings applied without restarting the server', startsBefore > 0 && serverStarts() === startsBefore, { startsBefore, startsAfter: serverStarts() });
    }

    // Changing tfperf.interpreter restarts the server; a bad interpreter gets its own message (the
    // driver checks the notification), and setting it back brings the diagnostics back.
    const config = () => vscode.workspace.getConfiguration('tfperf');
    const original = config().inspect('interpreter').globalValue;
    const cases = [{ name: 'missing', interpreter: '/nonexistent/bin/python', expect: 'cannot run the Python interpreter /nonexistent/bin/python' }];
    if (process.env.TFPERF_E2E_OLD_PYTHON) {
        cases.unshift({ name: 'old-python', interpreter: process.env.TFPERF_E2E_OLD_PYTHON, expect: 'tfperf needs Python 3\\.10 or newer, but .* is Python 3\\.[0-9]\\.' });
    }
    const startsBefore = serverStarts();
    for (const c of cases) {
        await config().update('interpreter', c.interpreter, vscode.ConfigurationTarget.Global);
        phase(`expect-toast-${c.name}`, { expectToast: c.expect });
        await signal(`ui-${c.name}`, 60000);
    }
    await config().update('interpreter', original, vscode.ConfigurationTarget.Global);
    phase('interpreter-restored');
    const back = await waitFor(() => tfperfDiagnostics(uri).length > 0 && serverStarts() >= startsBefore + cases.length + 1, 60000);
    check('tfperf.interpreter changes restart the server; restoring it brings diagnostics back', back,
        { startsBefore, startsAfter: serverStarts(), diagnostics: tfperfDiagnostics(uri).length });

    // Restricted-Mode gating is exercised by a separate run (see run.sh); here: trust is on.
    check('workspace trusted in this run', vscode.workspace.isTrusted === (process.env.TFPERF_E2E_TRUSTED !== '0'));
    await runNotebook(folder);
    await runObserve(folder);
}

// Observe: "tfperf: Observe: Run This File" (run by the driver from the command palette) runs a small
// program under TensorFlow; a tf.function called with a new Python float each iteration really
// retraces, and the observed fact lands on the call line as a diagnostic, in the hover and as an
// inlay hint, marked "observed"; the static retrace hint there says the run confirmed it.
const OBSERVE_SOURCE = 'import tensorflow as tf\n\n\n@tf.function\ndef scale(x, factor):\n    return x * factor\n\n\n'
    + 'x = tf.ones([3])\nfor step in range(5):\n    factor = 1.0 + step / 10\n    x = scale(x, factor)\n';
const OBSERVE_LINE = 11; // 0-based: `x = scale(x, factor)`

async function runObserve(folder) {
    if (!(await vscode.commands.getCommands(true)).includes('tfperf.observe')) {
        state.notes.observeSkipped = 'server does not register tfperf.observe';
        return;
    }
    const file = path.join(folder, 'observe_retrace.py');
    fs.writeFileSync(file, OBSERVE_SOURCE);
    const uri = vscode.Uri.file(file);
    const editor = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri), { preview: false });
    const staticDiags = await settledDiagnostics(uri, 120000, 2000);
    check('observe: static retrace hint on the call line before the run', staticDiags.some((d) => codeOf(d) === 'TFP101' && d.range.start.line === OBSERVE_LINE),
        staticDiags.map(describe));
    editor.selection = new vscode.Selection(OBSERVE_LINE, 4, OBSERVE_LINE, 4);
    editor.revealRange(new vscode.Range(OBSERVE_LINE, 0, OBSERVE_LINE, 0), vscode.TextEditorRevealType.InCenter);
    const observedDiags = () => vscode.languages.getDiagnostics(uri).filter((d) => d.source === 'tfperf (observed)');
    const started = Date.now();
    phase('observe', { observeFile: file, observeLine: OBSERVE_LINE });
    // The driver runs the command; TensorFlow's import alone takes several seconds (more on a busy machine).
    const seen = await waitFor(() => observedDiags().some((d) => codeOf(d) === 'observed-retrace'), 300000);
    state.notes.observeSeconds = Math.round((Date.now() - started) / 1000);
    const retrace = observedDiags().filter((d) => codeOf(d) === 'observed-retrace');
    check('observe: the run publishes an observed retrace diagnostic', seen, { seconds: state.notes.observeSeconds, observed: observedDiags().map(describe) });
    check('observe: on the call line, with the trace count and the culprit', retrace.length === 1 && retrace[0].range.start.line === OBSERVE_LINE
        && /scale traced 5x here: factor is a Python float with 5 values/.test(retrace[0].message), retrace.map(describe));
    check('observe: marked observed, with the command that ran', retrace.length > 0 && /\(observed: `python[\d.]* observe_retrace\.py`, /.test(retrace[0].message),
        retrace.map((d) => d.message));
    const confirmed = tfperfDiagnostics(uri).find((d) => codeOf(d) === 'TFP101' && d.range.start.line === OBSERVE_LINE);
    check('observe: the static hint says the run confirmed it', confirmed && /Confirmed by a run: traced 5x here/.test(confirmed.message), confirmed && confirmed.message);
    const hover = await hoverText(uri, new vscode.Position(OBSERVE_LINE, 8));
    check('observe: hover shows the observed fact', /\*\*Observed\*\*/.test(hover) && /factor is a Python float with 5 values/.test(hover), hover.slice(0, 600));
    const hints = (await vscode.commands.executeCommand('vscode.executeInlayHintProvider', uri, new vscode.Range(0, 0, 20, 0))) || [];
    const labels = hints.filter((h) => h.position.line === OBSERVE_LINE)
        .map((h) => (typeof h.label === 'string' ? h.label : h.label.map((p) => p.value).join('')));
    check('observe: inlay hint on the call line marked (observed)', labels.some((l) => /traced 5x: factor is a Python float/.test(l) && /\(observed\)/.test(l)), labels);
    phase('observed', { observeLine: OBSERVE_LINE });
    await signal('ui-observed', 90000);
}

// A Jupyter notebook in VS Code's built-in notebook editor (no kernel): the code cells are one
// module to the server, so a tf.function defined in one cell and called in a loop in another is found.
const NOTEBOOK_CELLS = [
    ['markdown', '# Training'],
    ['code', '%matplotlib inline\nimport tensorflow as tf\n\n@tf.function(experimental_relax_shapes=True)\ndef train_step(x, step):\n    return x * 2.0 + tf.cast(step, tf.float32)\n'],
    ['code', 'x = tf.ones([4])\nfor step in range(3):\n    train_step(x, step)\n!echo done'],
];

async function runNotebook(folder) {
    const file = path.join(folder, 'train.ipynb');
    fs.writeFileSync(file, JSON.stringify({
        cells: NOTEBOOK_CELLS.map(([kind, text]) => ({
            cell_type: kind, metadata: {}, source: text.split(/(?<=\n)/),
            ...(kind === 'code' ? { execution_count: null, outputs: [] } : {}),
        })),
        metadata: { kernelspec: { display_name: 'Python 3', language: 'python', name: 'python3' }, language_info: { name: 'python' } },
        nbformat: 4, nbformat_minor: 5,
    }, null, 1) + '\n');
    const notebook = await vscode.workspace.openNotebookDocument(vscode.Uri.file(file));
    await vscode.window.showNotebookDocument(notebook);
    const define = notebook.cellAt(1).document;
    const loop = notebook.cellAt(2).document;
    check('notebook cells are Python', define.languageId === 'python' && loop.languageId === 'python', [define.languageId, loop.languageId]);
    const inLoop = await settledDiagnostics(loop.uri, 120000);
    const retrace = inLoop.find((d) => codeOf(d) === 'TFP101');
    check('notebook: squiggle in the loop cell for a tf.function of another cell', retrace && retrace.range.start.line === 2,
        { cell: loop.uri.toString(), findings: inLoop.map(describe) });
    const inDefine = await settledDiagnostics(define.uri, 30000);
    check('notebook: diagnostics in the defining cell, positions inside it', inDefine.some((d) => codeOf(d) === 'TFP106' && d.range.start.line === 3),
        inDefine.map(describe));
    const hover = retrace ? await hoverText(loop.uri, retrace.range.start.translate(0, 1)) : '';
    check('notebook: hover in a cell', /TFP101/.test(hover), hover.slice(0, 300));
    phase('notebook', { notebookFile: file });
    await signal('ui-notebook', 90000);

    const fixable = tfperfDiagnostics(define.uri).find((d) => codeOf(d) === 'TFP106');
    const actions = fixable ? (await vscode.commands.executeCommand('vscode.executeCodeActionProvider', define.uri, fixable.range, vscode.CodeActionKind.QuickFix.value, 50)) || [] : [];
    const fix = actions.find((a) => a.edit && /TFP106/.test(a.title));
    if (check('notebook: quick fix offered in a cell', fix !== undefined, actions.map((a) => a.title))) {
        const applied = await vscode.workspace.applyEdit(fix.edit);
        const text = define.getText();
        check('notebook: quick fix applied to the cell', applied && text.includes('reduce_retracing=True') && !text.includes('experimental_relax_shapes'), text);
        const gone = await waitFor(() => !tfperfDiagnostics(define.uri).some((d) => codeOf(d) === 'TFP106'), 30000);
        check('notebook: fixed finding disappears', gone);
        check('notebook: the other cell is untouched', loop.getText() === NOTEBOOK_CELLS[2][1]);
    }
    phase('notebook-fixed');
    await signal('ui-notebook-fixed', 60000);
}

async function runRestricted() {
    // Restricted Mode: hints must work, benchmarks must be refused with the explanation.
    const folder = vscode.workspace.workspaceFolders[0].uri.fsPath;
    check('workspace is untrusted', !vscode.workspace.isTrusted);
    const file = await pickFile(folder);
    const uri = vscode.Uri.file(file);
    let editor = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri), { preview: false });
    const diags = await settledDiagnostics(uri, 120000);
    check('restricted: diagnostics still published', diags.length > 0, { count: diags.length });
    const target = diags.find((d) => d.data && d.data.benchmarkable) || diags[0];
    if (target) {
        editor.selection = new vscode.Selection(target.range.start, target.range.start);
        const hoverBefore = await hoverText(uri, target.range.start.translate(0, 1));
        phase('restricted-benchmark');
        void vscode.commands.executeCommand('tfperf.benchmarkAtCursor');
        await signal('ui-restricted', 60000);
        const hoverAfter = await hoverText(uri, target.range.start.translate(0, 1));
        check('restricted: no benchmark ran (hover unchanged)', hoverAfter === hoverBefore);
    }

    // The driver now trusts the folder through the UI: benchmarks must work at once, same server.
    const startsBefore = serverStarts();
    phase('grant-trust');
    const trusted = await waitFor(() => vscode.workspace.isTrusted, 90000);
    check('folder trusted through the UI', trusted);
    if (trusted) {
        await sleep(1000); // the extension forwards workspaceTrusted with didChangeConfiguration
        editor = await vscode.window.showTextDocument(editor.document, { preview: false }); // the trust editor took the focus
        const candidates = tfperfDiagnostics(uri).filter((d) => d.data && d.data.benchmarkable).slice(0, 4);
        const { attempts, success } = await benchmarkUntilMeasured(uri, editor, candidates);
        state.notes.benchmarkAttempts = attempts;
        check('after trusting: a benchmark runs and its timings reach the hover', success !== undefined, attempts[attempts.length - 1]);
        check('after trusting: same server process (no restart)', startsBefore > 0 && serverStarts() === startsBefore, { startsBefore, startsAfter: serverStarts() });
    }
}

// tfperf.importStrategy "useBundled" against a Python without tfperf (a bare venv): the server comes
// from the .vsix's bundled/libs; diagnostics appear and nothing was installed. Then fix on save.
const FIX_ON_SAVE_SOURCE = 'import tensorflow as tf\n\n\n@tf.function(experimental_relax_shapes=True)\ndef step(x):\n    return x * 2\n';

async function runBundled() {
    const folder = vscode.workspace.workspaceFolders[0].uri.fsPath;
    const file = path.join(folder, 'fix_on_save.py');
    fs.writeFileSync(file, FIX_ON_SAVE_SOURCE);
    const uri = vscode.Uri.file(file);
    const doc = await vscode.workspace.openTextDocument(uri);
    const editor = await vscode.window.showTextDocument(doc, { preview: false });
    const diags = await settledDiagnostics(uri, 120000, 2000);
    check('bundled: diagnostics published by the bundled server (interpreter without tfperf)', diags.some((d) => codeOf(d) === 'TFP106'), diags.map(describe));
    const log = tfperfLog();
    check('bundled: the extension started the server with importStrategy useBundled', /Import strategy: useBundled \(/.test(log) && /"tfperf_source":"bundled"|\\"tfperf_source\\": ?\\"bundled\\"/.test(log),
        (log.match(/.*Import strategy.*|.*tfperf_source.*/g) || []).map((l) => l.slice(0, 300)));
    check('bundled: no "Install tfperf" offered, nothing installed into the interpreter', !/tfperf is not installed in|Installing tfperf into/.test(log)
        && !fs.readdirSync(process.env.TFPERF_E2E_SITE_PACKAGES).some((f) => /^(tfperf|pygls|libcst|lsprotocol)/i.test(f)),
        fs.readdirSync(process.env.TFPERF_E2E_SITE_PACKAGES));
    phase('bundled-diagnostics');
    await signal('ui-bundled', 60000);
    await fixOnSave(doc, editor);
}

// Fix on save: "editor.codeActionsOnSave": {"source.fixAll.tfperf": "explicit"} for Python; a
// user's save (Ctrl+S in the page, done by the driver) applies tfperf's safe fixes before writing.
async function fixOnSave(doc, editor) {
    const uri = doc.uri;
    const full = new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length));
    const offered = (await vscode.commands.executeCommand('vscode.executeCodeActionProvider', uri, full, 'source.fixAll.tfperf')) || [];
    state.notes.fixAllOffered = offered.map((a) => ({ title: a.title, kind: a.kind && a.kind.value, edit: Boolean(a.edit) }));
    check('fix on save: the server offers source.fixAll.tfperf', offered.some((a) => a.kind && a.kind.value === 'source.fixAll.tfperf' && a.edit), state.notes.fixAllOffered);
    // A user edit first: a save participant only runs for a dirty document.
    await editor.edit((b) => b.insert(doc.positionAt(doc.getText().length), '\n\nstep(tf.ones([2]))\n'));
    await waitFor(() => doc.isDirty, 5000, 100);
    await settledDiagnostics(uri, 30000, 1500);
    phase('fix-on-save', { saveFile: uri.fsPath });
    await signal('ui-saved', 60000);
    const fixed = await waitFor(() => !doc.isDirty && doc.getText().includes('@tf.function(reduce_retracing=True)'), 30000, 250);
    const onDisk = fs.readFileSync(uri.fsPath, 'utf8');
    check('fix on save: saving applies the safe fix (in the editor and on disk)', fixed && onDisk.includes('@tf.function(reduce_retracing=True)') && onDisk.includes('step(tf.ones([2]))'),
        { dirty: doc.isDirty, editor: doc.getText(), disk: onDisk });
    const gone = await waitFor(() => !tfperfDiagnostics(uri).some((d) => codeOf(d) === 'TFP106'), 30000);
    check('fix on save: the fixed finding disappears', gone, tfperfDiagnostics(uri).map(describe));
}

function tfperfLog() {
    const file = logRoot && findLog(logRoot);
    return file ? fs.readFileSync(file, 'utf8') : '';
}

let logRoot;
/** The tfperf extension's LogOutputChannel file (VS Code writes it as tfperf.log). */
function findLog(dir) {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) {
            const hit = findLog(full);
            if (hit) return hit;
        } else if (entry.name === 'tfperf.log' && dir.includes('tfperf.tfperf')) {
            return full;
        }
    }
    return undefined;
}

/** How often the tfperf extension started a server, read from its LogOutputChannel file. */
function serverStarts() {
    const file = logRoot && findLog(logRoot);
    return file ? (fs.readFileSync(file, 'utf8').match(/\] Interpreter: /g) || []).length : -1;
}

exports.activate = function activate(context) {
    if (!DIR) {
        return;
    }
    logRoot = path.dirname(context.logUri.fsPath); // .../exthost: every extension's log folder
    const main = process.env.TFPERF_E2E_MODE === 'bundled' ? runBundled : process.env.TFPERF_E2E_TRUSTED === '0' ? runRestricted : run;
    main()
        .catch((err) => check('probe crashed', false, String(err && err.stack || err)))
        .finally(() => phase('done'));
};
