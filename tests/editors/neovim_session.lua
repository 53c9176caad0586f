-- Drives tfperf in a real (headless) Neovim 0.7+: open a file, wait for diagnostics, hover,
-- apply the quick fix, and write what happened to a JSON file for the pytest side to check.
-- Arguments come from the environment: TFPERF_PYTHON, TFPERF_SERVER, TFPERF_FILE, TFPERF_OUT.
local out = {}
local function finish(ok, err)
  out.ok = ok
  out.error = err
  local f = io.open(os.getenv("TFPERF_OUT"), "w")
  f:write(vim.fn.json_encode(out))
  f:close()
  if ok then vim.cmd("qall!") else vim.cmd("cquit! 1") end
end

local ok, err = pcall(function()
  local captured = {}
  local default_publish = vim.lsp.handlers["textDocument/publishDiagnostics"]
  vim.lsp.handlers["textDocument/publishDiagnostics"] = function(e, result, ctx, config)
    captured = result.diagnostics
    return default_publish(e, result, ctx, config)
  end
  vim.cmd("edit " .. os.getenv("TFPERF_FILE"))
  local bufnr = vim.api.nvim_get_current_buf()
  local client_id = vim.lsp.start_client({
    name = "tfperf",
    cmd = { os.getenv("TFPERF_PYTHON"), os.getenv("TFPERF_SERVER") },
    root_dir = vim.fn.fnamemodify(os.getenv("TFPERF_FILE"), ":h"),
  })
  vim.lsp.buf_attach_client(bufnr, client_id)
  -- 180 s: the first diagnostics come in about a second; a stalled CI machine took over 20 s to start the server.
  assert(vim.wait(180000, function() return #captured > 0 end, 50), "no diagnostics within 180 s")
  out.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(out.diagnostics, { code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code), lnum = d.lnum, col = d.col, message = d.message })
  end
  -- Hover on the first finding.
  local first = captured[1]
  local client = vim.lsp.get_client_by_id(client_id)
  local hover = vim.lsp.buf_request_sync(bufnr, "textDocument/hover", {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) }, position = first.range.start,
  }, 60000)
  for _, response in pairs(hover or {}) do
    if response.result then out.hover = response.result.contents.value end
  end
  -- Code actions for that diagnostic; apply the tfperf quick fix like the user would.
  local actions = vim.lsp.buf_request_sync(bufnr, "textDocument/codeAction", {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) }, range = first.range,
    context = { diagnostics = { first } },
  }, 60000)
  out.actions = {}
  for _, response in pairs(actions or {}) do
    for _, action in ipairs(response.result or {}) do
      table.insert(out.actions, action.title)
      if action.kind == "quickfix" and not out.applied and action.title:find(os.getenv("TFPERF_FIX")) then
        local resolved = action
        if not action.edit then
          local r = client.request_sync("codeAction/resolve", action, 60000, bufnr)
          resolved = r.result
        end
        vim.lsp.util.apply_workspace_edit(resolved.edit, client.offset_encoding or "utf-16")
        out.applied = action.title
      end
    end
  end
  out.text = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n")
  vim.lsp.stop_client(client_id)
end)
finish(ok, ok and nil or tostring(err))
