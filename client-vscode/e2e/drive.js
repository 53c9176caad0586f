// Browser side of the e2e: opens code-server in headless Chromium, checks what a user sees
// (squiggles, hover, progress notification with Cancel, status bar, Restricted Mode message) and
// takes screenshots, in step with the probe extension (probe.json <-> signal-* files).
// Usage: node drive.js <puppeteer-core dir> <url> <exchange dir> <artifacts dir> <trusted|restricted>
const fs = require('fs');
const path = require('path');

const [puppeteerDir, url, dir, artifacts, mode] = process.argv.slice(2);
const puppeteer = require(puppeteerDir);
const TIMING = /\d+(?:\.\d+)?\s*(?:ns|µs|us|ms|s)\b/;
const checks = [];
const notes = {};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Every wait below ends as soon as its condition holds; its bound is multiplied by this (default 3)
// so that a stalled CI machine (20x slower than usual, seen) fails only what is really broken.
const WAIT_SCALE = Number(process.env.TFPERF_E2E_WAIT_SCALE || 3);
const check = (name, ok, detail) => { checks.push({ name, ok: Boolean(ok), detail }); console.log(`${ok ? 'ok  ' : 'FAIL'} ui: ${name}`); return Boolean(ok); };
const probe = () => { try { return JSON.parse(fs.readFileSync(path.join(dir, 'probe.json'), 'utf8')); } catch { return { phase: 'none', checks: [] }; } };
const signal = (name) => fs.writeFileSync(path.join(dir, `signal-${name}`), '');
// The short wait lets toasts and hovers finish their fade-in animation before the picture.
const shot = async (page, name) => { await sleep(600); await page.screenshot({ path: path.join(artifacts, `${mode}-${name}.png`) }); };
const norm = (s) => s.replace(/\u00a0/g, ' ');

async function waitPhase(phases, timeoutMs) {
    const end = Date.now() + timeoutMs * WAIT_SCALE;
    while (Date.now() < end) {
        const p = probe().phase;
        if (phases.includes(p)) return p;
        await sleep(500);
    }
    return probe().phase;
}

/** Visible hover widget text, '' if none. */
const hoverText = (page) => page.evaluate(() => [...document.querySelectorAll('.monaco-hover')]
    .filter((e) => e.offsetParent !== null && !e.classList.contains('hidden'))
    .map((e) => e.innerText).join('\n'));

/** Centre of a squiggle on editor line `line` (0-based), or of the first one when line is undefined. */
const squiggleAt = (page, line) => page.evaluate((line) => {
    const editor = document.querySelector('.part.editor .editor-group-container.active .monaco-editor') || document.querySelector('.part.editor .monaco-editor');
    if (!editor) return null;
    const squiggles = [...editor.querySelectorAll('.view-overlays [class*="squiggly-"]')].map((e) => e.getBoundingClientRect()).filter((r) => r.width > 0);
    if (line === undefined || line === null) {
        const r = squiggles[0];
        return r ? { x: r.left + Math.min(r.width / 2, 12), y: r.top + r.height / 2 } : null;
    }
    const number = [...editor.querySelectorAll('.margin-view-overlays .line-numbers')].find((e) => e.textContent.trim() === String(line + 1));
    if (!number) return null;
    const y = number.getBoundingClientRect().top + number.getBoundingClientRect().height / 2;
    const r = squiggles.find((s) => Math.abs(s.top + s.height / 2 - y) < 8);
    return r ? { x: r.left + Math.min(r.width / 2, 12), y: r.top + r.height / 2 } : null;
}, line);

async function hoverSquiggle(page, line, accept, timeoutMs = 20000) {
    const end = Date.now() + timeoutMs * WAIT_SCALE;
    let text = '';
    while (Date.now() < end) {
        const at = await squiggleAt(page, line);
        if (at) {
            await page.mouse.move(at.x - 3, at.y);
            await page.mouse.move(at.x, at.y, { steps: 3 });
            for (let i = 0; i < 10; i++) {
                await sleep(300);
                text = norm(await hoverText(page));
                if (accept(text)) return text;
            }
        }
        await page.mouse.move(5, 5);
        await sleep(700);
    }
    return text;
}

const statusText = (page) => page.evaluate(() => [...document.querySelectorAll('.statusbar-item')].map((e) => e.innerText.trim()).filter((t) => /tfperf/.test(t)).join(' | '));
const toasts = (page) => page.evaluate(() => [...document.querySelectorAll('.notifications-toasts .notification-toast')].filter((e) => e.offsetParent !== null).map((e) => ({
    text: e.innerText.replace(/\s+/g, ' ').trim(),
    buttons: [...e.querySelectorAll('.monaco-button, .action-label')].map((b) => (b.innerText || b.getAttribute('aria-label') || '').trim()).filter(Boolean),
    progress: e.querySelector('.monaco-progress-container.active, .monaco-progress-container.infinite, .monaco-progress-container.discrete') !== null,
})));

async function main() {
    fs.mkdirSync(artifacts, { recursive: true });
    const browser = await puppeteer.launch({
        executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update',
            '--disable-sync', '--no-first-run', '--window-size=1400,900'],
        defaultViewport: { width: 1400, height: 900 },
        handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false, // ours below: close Chromium, then exit
    });
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
        process.on(sig, () => { browser.process()?.kill('SIGKILL'); process.exit(1); });
    }
    fs.writeFileSync(path.join(dir, 'chromium.pid'), String(browser.process().pid));
    try {
        const page = await browser.newPage();
        await page.goto(url, { waitUntil: 'domcontentloaded' });
        await page.waitForSelector('.monaco-workbench', { timeout: WAIT_SCALE * 90000 });
        if (mode === 'restricted') {
            await restricted(page);
        } else if (mode === 'bundled') {
            await bundled(page);
        } else {
            await trusted(page);
        }
        notes.status = await statusText(page);
        await waitPhase(['done'], 60000);
        await shot(page, '99-final');
    } finally {
        await browser.close();
    }
}

/** Clicks a button of a visible notification toast whose text matches `text`. */
const clickToastButton = (page, text, label) => page.evaluate((text, label) => {
    const toast = [...document.querySelectorAll('.notifications-toasts .notification-toast')].find((e) => e.offsetParent !== null && new RegExp(text).test(e.innerText));
    const button = toast && [...toast.querySelectorAll('.monaco-button')].find((b) => b.innerText.trim() === label);
    if (button) button.click();
    return Boolean(button);
}, text, label);

async function install(page) {
    // A fresh environment without tfperf: the extension must offer "Install tfperf"; click it.
    let prompt;
    const end = Date.now() + WAIT_SCALE * 90000;
    while (!prompt && Date.now() < end) {
        prompt = (await toasts(page)).find((t) => /tfperf is not installed in/.test(t.text));
        if (!prompt) await sleep(500);
    }
    check('missing tfperf: message with an Install button', prompt && prompt.buttons.includes('Install tfperf'), prompt);
    if (!prompt) return;
    await shot(page, '00-install-prompt');
    check('Install tfperf clicked', await clickToastButton(page, 'tfperf is not installed in', 'Install tfperf'));
    let done;
    const end2 = Date.now() + WAIT_SCALE * 180000;
    while (!done && Date.now() < end2) {
        done = (await toasts(page)).find((t) => /Installed tfperf into|Installing tfperf into .* failed/.test(t.text));
        if (!done) await sleep(500);
    }
    check('install succeeded message', done && /Installed tfperf into/.test(done.text), done);
}

async function trusted(page) {
    if (process.env.TFPERF_E2E_EXPECT_INSTALL === '1') {
        await install(page);
    }
    const p1 = await waitPhase(['diagnostics', 'done'], 300000);
    check('probe reached diagnostics', p1 === 'diagnostics', p1);
    await sleep(1500);
    const squiggles = await page.$$eval('.part.editor .monaco-editor .view-overlays [class*="squiggly-"]', (els) => els.length);
    check('squiggles visible in the editor', squiggles > 0, squiggles);
    notes.statusAfterStart = await statusText(page);
    check('status bar shows tfperf state', /tfperf/.test(notes.statusAfterStart), notes.statusAfterStart);
    await shot(page, '01-squiggles');
    const hover = await hoverSquiggle(page, probe().notes.firstLine, (t) => /TFP/.test(t));
    check('mouse hover on a squiggle shows the tfperf hover', /TFP/.test(hover), hover.slice(0, 300));
    await shot(page, '02-hover');
    await page.mouse.move(5, 5);
    await page.keyboard.press('Escape');
    signal('ui-squiggles');

    const p2 = await waitPhase(['benchmarking', 'benchmark-skipped', 'done'], 240000);
    if (p2 !== 'benchmarking') {
        notes.benchmark = 'skipped by the probe: ' + (probe().notes.benchmarkSkipped || p2);
        return;
    }
    // Progress notification with a Cancel button while the benchmark runs.
    let seen;
    const end = Date.now() + WAIT_SCALE * 120000;
    while (!seen && Date.now() < end && probe().phase === 'benchmarking') {
        seen = (await toasts(page)).find((t) => /benchmark/i.test(t.text) && t.buttons.some((b) => /cancel/i.test(b)));
        if (!seen) await sleep(250);
    }
    notes.statusWhileBenchmarking = await statusText(page);
    if (seen) await shot(page, '03-progress');
    check('benchmark progress notification with Cancel', seen, seen || await toasts(page));

    const p3 = await waitPhase(['benchmarked', 'done'], 4 * Number(process.env.TFPERF_E2E_BENCH_TIMEOUT || 300) * 1000 + 60000);
    if (p3 === 'benchmarked') {
        let result;
        const end3 = Date.now() + WAIT_SCALE * 15000;
        while (!result && Date.now() < end3) {
            result = (await toasts(page)).find((t) => /tfperf TFP\w+ \(/.test(t.text) && t.buttons.includes('Show in Hover'));
            if (!result) await sleep(250);
        }
        check('benchmark result notification (tfperf/benchmarkResult)', result, result || await toasts(page));
        await page.keyboard.press('Escape');
        await sleep(1000);
        const text = await hoverSquiggle(page, probe().notes.benchmarkLine, (t) => /Benchmark/.test(t) && TIMING.test(t) && /TFP/.test(t), 30000);
        check('mouse hover shows benchmark timings', TIMING.test(text), text.slice(0, 600));
        await shot(page, '04-benchmark-hover');
    }
    signal('ui-benchmark-hover');

    if ((await waitPhase(['cancel-test', 'done'], 60000)) === 'cancel-test') {
        let clicked = false;
        const end4 = Date.now() + WAIT_SCALE * 120000;
        while (!clicked && Date.now() < end4 && probe().phase === 'cancel-test') {
            clicked = await clickToastButton(page, 'benchmarking', 'Cancel');
            if (!clicked) await sleep(200);
        }
        check('clicked Cancel on the benchmark notification', clicked);
        signal('ui-cancel-clicked');
    }

    // The probe sets a bad tfperf.interpreter and names the message it expects.
    await page.mouse.move(5, 5); // no leftover hover in these screenshots
    for (;;) {
        const phase = await waitPhase(['done', 'interpreter-restored'], 1000);
        if (phase === 'done' || phase === 'interpreter-restored') break;
        if (!phase.startsWith('expect-toast-')) continue;
        const name = phase.slice('expect-toast-'.length);
        const want = new RegExp(probe().notes.expectToast);
        let toast;
        const end5 = Date.now() + WAIT_SCALE * 45000;
        while (!toast && Date.now() < end5) {
            toast = (await toasts(page)).find((t) => want.test(t.text));
            if (!toast) await sleep(250);
        }
        check(`message for a bad interpreter (${name})`, toast, toast || await toasts(page));
        notes[`status-${name}`] = await statusText(page);
        await shot(page, `05-interpreter-${name}`);
        await page.keyboard.press('Escape');
        signal(`ui-${name}`);
        while (probe().phase === phase) await sleep(200);
    }

    // The notebook: a squiggle in a cell, the mouse hover on it, a screenshot before and after the fix.
    if ((await waitPhase(['notebook', 'done'], 240000)) === 'notebook') {
        await sleep(1500);
        // VS Code draws the notebook outside `.part.editor` (an overlay): search the whole page; the
        // notebook is the only visible editor now (hidden editors' squiggles have no width).
        const cellSquiggles = () => page.evaluate(() => [...document.querySelectorAll('[class*="squiggly-"]')]
            .map((e) => e.getBoundingClientRect()).filter((r) => r.width > 0)
            .map((r) => ({ x: r.left + Math.min(r.width / 2, 12), y: r.top + r.height / 2 })));
        const inCells = await cellSquiggles();
        check('notebook: squiggles visible in the cells', inCells.length > 0, inCells);
        await shot(page, '06-notebook');
        let hover = '';
        for (const at of inCells.slice(0, 3)) {
            await page.mouse.move(at.x - 3, at.y);
            await page.mouse.move(at.x, at.y, { steps: 3 });
            for (let i = 0; i < 10 && !/TFP/.test(hover); i++) {
                await sleep(300);
                hover = norm(await hoverText(page));
            }
            if (/TFP/.test(hover)) break;
        }
        check('notebook: mouse hover on a cell squiggle shows the tfperf hover', /TFP/.test(hover), hover.slice(0, 300));
        await shot(page, '07-notebook-hover');
        await page.mouse.move(5, 5);
        await page.keyboard.press('Escape');
        signal('ui-notebook');
        if ((await waitPhase(['notebook-fixed', 'done'], 90000)) === 'notebook-fixed') {
            await sleep(1500);
            await shot(page, '08-notebook-fixed');
        }
        signal('ui-notebook-fixed');
    }

    // Observe: run "tfperf: Observe: Run This File" from the command palette, as a user would; the
    // probe waits for the observed diagnostic; then the mouse hover on the call line shows the fact.
    if ((await waitPhase(['observe', 'done'], 180000)) === 'observe') {
        await observe(page);
    }
}

async function observe(page) {
    const line = probe().notes.observeLine;
    await page.mouse.move(5, 5);
    await page.keyboard.press('Escape');
    await page.click('.part.editor .editor-group-container.active .monaco-editor .view-lines');
    await page.keyboard.press('F1');
    const palette = await page.waitForSelector('.quick-input-widget .quick-input-box input', { visible: true, timeout: WAIT_SCALE * 15000 }).catch(() => null);
    check('observe: command palette opened', palette !== null);
    if (!palette) return;
    await page.keyboard.type('tfperf: Observe: Run This File', { delay: 10 });
    const item = await page.waitForFunction(() => [...document.querySelectorAll('.quick-input-widget .monaco-list-row')]
        .find((r) => r.offsetParent !== null && /tfperf: Observe: Run This File/.test(r.innerText)), { timeout: WAIT_SCALE * 15000 }).catch(() => null);
    check('observe: "tfperf: Observe: Run This File" in the command palette', item !== null);
    await page.keyboard.press('Enter');
    // The progress notification (cancellable) while the file runs; TensorFlow's import takes seconds.
    let running;
    const end = Date.now() + WAIT_SCALE * 60000;
    while (!running && Date.now() < end && probe().phase === 'observe') {
        running = (await toasts(page)).find((t) => /observing observe_retrace\.py/.test(t.text));
        if (!running) await sleep(250);
    }
    notes.observeProgress = running;
    if (running) await shot(page, '09-observe-running');
    check('observe: progress notification while the file runs', running, running || probe().phase);
    await waitPhase(['observed', 'done'], 360000);
    await sleep(1500);
    const text = await hoverSquiggle(page, line, (t) => /Observed/.test(t) && /traced 5x/.test(t), 30000);
    check('observe: mouse hover on the call line shows the observed fact', /Observed/.test(text) && /factor is a Python float with 5 values/.test(text), text.slice(0, 800));
    notes.observeHover = text.slice(0, 1500);
    await shot(page, '10-observed-hover');
    await page.mouse.move(5, 5);
    await page.keyboard.press('Escape');
    signal('ui-observed');
}

async function bundled(page) {
    const p1 = await waitPhase(['bundled-diagnostics', 'done'], 180000);
    check('bundled: probe reached diagnostics', p1 === 'bundled-diagnostics', p1);
    await sleep(1000);
    const squiggles = await page.$$eval('.part.editor .monaco-editor .view-overlays [class*="squiggly-"]', (els) => els.length);
    check('bundled: squiggles visible in the editor', squiggles > 0, squiggles);
    notes.toasts = await toasts(page);
    check('bundled: no install prompt', !notes.toasts.some((t) => /tfperf is not installed/.test(t.text)), notes.toasts);
    await shot(page, '01-bundled-squiggles');
    signal('ui-bundled');
    // Fix on save, the way a user saves: focus the editor, Ctrl+S.
    if ((await waitPhase(['fix-on-save', 'done'], 90000)) === 'fix-on-save') {
        await page.click('.part.editor .editor-group-container.active .monaco-editor .view-lines');
        await page.keyboard.down('Control');
        await page.keyboard.press('KeyS');
        await page.keyboard.up('Control');
        signal('ui-saved');
        await waitPhase(['done'], 60000);
        await shot(page, '02-fixed-on-save');
    }
}

async function restricted(page) {
    // The trust prompt: answer "No" to enter Restricted Mode.
    const no = await page.waitForFunction(() => [...document.querySelectorAll('.monaco-dialog-box .monaco-button')].find((b) => /don't trust|No,/i.test(b.innerText)), { timeout: WAIT_SCALE * 60000 }).catch(() => null);
    check('trust prompt shown', no !== null);
    if (no) {
        await no.asElement().click();
    }
    const p1 = await waitPhase(['restricted-benchmark', 'done'], 300000);
    check('probe reached the restricted benchmark step', p1 === 'restricted-benchmark', p1);
    let message;
    const end = Date.now() + WAIT_SCALE * 30000;
    while (!message && Date.now() < end) {
        message = (await toasts(page)).find((t) => /Benchmarks run your code/.test(t.text));
        if (!message) await sleep(250);
    }
    check('Restricted Mode explains why benchmarks are disabled', message, message);
    check('Restricted Mode message offers Manage Workspace Trust', message && message.buttons.some((b) => /Manage Workspace Trust/.test(b)), message && message.buttons);
    notes.status = await statusText(page);
    const shield = await page.evaluate(() => [...document.querySelectorAll('.statusbar-item')].some((e) => /tfperf/.test(e.innerText) && e.querySelector('.codicon-shield')));
    check('status bar marks Restricted Mode (tfperf item with a shield)', shield, notes.status);
    await shot(page, '01-restricted');
    signal('ui-restricted');

    // Trust the folder the way a user would: the message's button, then "Trust" in the trust editor.
    if ((await waitPhase(['grant-trust', 'done'], 60000)) === 'grant-trust') {
        const opened = await clickToastButton(page, 'Benchmarks run your code', 'Manage Workspace Trust');
        const trust = await page.waitForFunction(() => [...document.querySelectorAll('.workspace-trust-editor .monaco-button')].find((b) => b.innerText.trim() === 'Trust'), { timeout: WAIT_SCALE * 20000 }).catch(() => null);
        check('Manage Workspace Trust opens the trust editor', opened && trust !== null);
        if (trust) {
            await trust.asElement().click();
        }
        const p2 = await waitPhase(['benchmarking', 'done'], 60000);
        check('probe benchmarks after trust was granted', p2 === 'benchmarking', p2);
        await waitPhase(['done'], 4 * Number(process.env.TFPERF_E2E_BENCH_TIMEOUT || 300) * 1000);
        await shot(page, '02-trusted-later');
    }
}

main()
    .catch((err) => check('driver crashed', false, String(err && err.stack || err)))
    .finally(() => {
        const p = probe();
        const all = [...p.checks.map((c) => ({ ...c, name: `api: ${c.name}` })), ...checks.map((c) => ({ ...c, name: `ui: ${c.name}` }))];
        fs.writeFileSync(path.join(artifacts, `summary-${mode}.json`), JSON.stringify({ mode, checks: all, probeNotes: p.notes, uiNotes: notes }, null, 2));
        for (const c of p.checks) console.log(`${c.ok ? 'ok  ' : 'FAIL'} api: ${c.name}`);
        const failed = all.filter((c) => !c.ok);
        console.log(`${mode}: ${all.length - failed.length}/${all.length} checks passed`);
        process.exit(failed.length === 0 && all.length > 0 ? 0 : 1);
    });
