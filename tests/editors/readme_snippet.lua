-- Runs a Neovim snippet from the README as a user's init.lua would, opens a Python file and
-- writes what tfperf reported to TFPERF_OUT (JSON). TFPERF_SNIPPET: the snippet's file.
local out = { ok = false }
local function finish()
  local f = io.open(os.getenv("TFPERF_OUT"), "w")
  f:write(vim.fn.json_encode(out))
  f:close()
  vim.cmd("qall!")
end
local ok, err = pcall(function()
  vim.cmd("filetype on")
  dofile(os.getenv("TFPERF_SNIPPET"))
  vim.cmd("edit " .. os.getenv("TFPERF_FILE"))
  -- 180 s: about a second normally; a stalled CI machine took over 20 s to start the server.
  local got = vim.wait(180000, function() return #vim.diagnostic.get(0) > 0 end, 100)
  assert(got, "no diagnostics within 180 s")
  out.codes = {}
  for _, d in ipairs(vim.diagnostic.get(0)) do
    table.insert(out.codes, d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code) or "?")
  end
  out.clients = {}
  for _, client in pairs(vim.lsp.get_active_clients()) do
    table.insert(out.clients, { name = client.name, root = client.config.root_dir })
  end
  if vim.lsp.inlay_hint and vim.lsp.inlay_hint.is_enabled then
    out.inlay_hints = vim.lsp.inlay_hint.is_enabled({ bufnr = 0 })
  end
  out.ok = true
end)
out.error = err and tostring(err) or nil
finish()
