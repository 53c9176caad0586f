"""initialize / initialized / configuration changes / shutdown."""
from __future__ import annotations

import asyncio
import logging

from lsprotocol import types
from pygls.uris import to_fs_path


log = logging.getLogger("tfperf_lsp")
SECTION = "tfperf"


def register(server) -> None:
    state = server.state

    @server.feature(types.INITIALIZE)
    def initialize(ls, params: types.InitializeParams):
        from tfperf_lsp.lsp.document import install

        install(ls)  # LSP line breaks only (pygls's document splits on \f, \x85, ...)
        roots = [to_fs_path(f.uri) for f in params.workspace_folders or []]
        if not roots and params.root_uri:
            roots = [to_fs_path(params.root_uri)]
        state.set_roots([r for r in roots if r])
        state.update_options(params.initialization_options if isinstance(params.initialization_options, dict) else {})
        capabilities = params.capabilities.text_document
        state.pull_diagnostics = bool(capabilities and capabilities.diagnostic)
        workspace = params.capabilities.workspace
        state.settings_pulled = asyncio.Event() if workspace and workspace.configuration else None

    @server.feature(types.INITIALIZED)
    async def initialized(ls, params):
        log.info("tfperf %s ready (%s diagnostics)", ls.version, "pull" if state.pull_diagnostics else "push")
        pulled = state.settings_pulled
        try:
            await pull_configuration(ls)
        finally:
            late = pulled is not None and pulled.is_set()  # the first analyses stopped waiting for it
            if pulled is not None:
                pulled.set()
        if late:
            from tfperf_lsp.lsp.features.diagnostics import refresh_all

            await refresh_all(ls)
        from tfperf_lsp.lsp.features.benchmark import notify_status

        notify_status(ls, "ready")

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls, params: types.DidChangeConfigurationParams):
        settings = params.settings
        if isinstance(settings, dict) and isinstance(settings.get(SECTION), dict):
            state.update_options(settings[SECTION])
        await pull_configuration(ls)
        from tfperf_lsp.lsp.features.diagnostics import refresh_all

        await refresh_all(ls)


async def settings_ready(ls, wait_seconds: float = 2.0) -> None:
    """Before the first analyses: wait (a little) for the settings asked for on `initialized`,
    so that a file opened with the editor is not analysed with the defaults (a `select` set in
    Neovim's `settings` would otherwise show only after the first edit)."""
    pulled = ls.state.settings_pulled
    if pulled is not None and not pulled.is_set():
        try:
            await asyncio.wait_for(pulled.wait(), wait_seconds)
        except asyncio.TimeoutError:
            pulled.set()  # a client that never answers: wait once, not before every analysis
            log.debug("no answer to workspace/configuration within %.1f s: analysing with the settings so far", wait_seconds)


async def pull_configuration(ls) -> None:
    """Ask the client for the ``tfperf`` section, if it can answer."""
    workspace = ls.client_capabilities.workspace
    if not (workspace and workspace.configuration):
        return
    try:
        answer = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
        )
    except Exception as exc:  # noqa: BLE001 - a client may refuse; initialization options stand
        log.debug("workspace/configuration failed: %s", exc)
        return
    if answer and isinstance(answer[0], dict):
        ls.state.update_options(answer[0])
        for problem in ls.state.settings("file:///").problems:
            if problem not in ls.state.reported_problems:  # once, not on every change
                ls.state.reported_problems.add(problem)
                log.warning("settings: %s", problem)
