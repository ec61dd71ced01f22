-- Drives the `language_server` example with Neovim's own LSP client
-- (`vim.lsp`, as in Neovim 0.7: `start_client` + `buf_attach_client`).
-- Run by tests/tests/interop/lsp_neovim.rs as
--   nvim --headless --clean -n -i NONE -c 'luafile tests/lsp/neovim_drive.lua'
-- with these environment variables:
--   LSP_SERVER   the server binary
--   LSP_FILE     a text file to create and edit (its directory is the root)
--   LSP_RESULTS  where to write the checks, as a JSON array of
--                {name, ok, detail}
-- Neovim's LSP log (every message, at level debug) is
-- stdpath('cache')/lsp.log.
-- Each check is also printed to stdout (`ok NAME` or `FAIL NAME: detail`).
-- Quits with `:qa!` when every check passed, `:cq` otherwise.

local server = assert(os.getenv('LSP_SERVER'), 'LSP_SERVER is not set')
local file = assert(os.getenv('LSP_FILE'), 'LSP_FILE is not set')
local results_path = assert(os.getenv('LSP_RESULTS'), 'LSP_RESULTS is not set')

local TIMEOUT = 10000
local results = {}
local failed = false

local function check(name, ok, detail)
  ok = ok and true or false
  if not ok then
    failed = true
  end
  table.insert(results, { name = name, ok = ok, detail = ok and '' or (detail or '') })
  io.stdout:write((ok and 'ok ' or 'FAIL ') .. name .. (ok and '' or (': ' .. (detail or ''))) .. '\n')
  io.stdout:flush()
end

local function finish()
  local out = io.open(results_path, 'w')
  if out then
    out:write(vim.fn.json_encode(results))
    out:close()
  end
  if failed then
    vim.cmd('cq')
  else
    vim.cmd('qa!')
  end
end

local function show(value)
  return vim.inspect(value, { newline = ' ', indent = '' })
end

-- The words as the server's contract defines them (maximal runs of ASCII
-- letters, digits and `_` here: the document's other characters are
-- symbols and spaces).
local function words(lines)
  local list = {}
  for _, line in ipairs(lines) do
    for word in line:gmatch('[A-Za-z0-9_]+') do
      table.insert(list, word)
    end
  end
  return list
end

-- The TODOs of `lines` as Neovim's diagnostics should show them: 0-based
-- line and byte columns (the server sends UTF-16 columns; Neovim converts).
local function expected_todos(lines)
  local list = {}
  for lnum, line in ipairs(lines) do
    local from = 1
    while true do
      local s, e = line:find('TODO', from, true)
      if not s then
        break
      end
      table.insert(list, { lnum = lnum - 1, col = s - 1, end_lnum = lnum - 1, end_col = e })
      from = e + 1
    end
  end
  return list
end

local function diagnostics_now(bufnr)
  local list = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(list, {
      lnum = d.lnum,
      col = d.col,
      end_lnum = d.end_lnum,
      end_col = d.end_col,
      severity = d.severity,
      source = d.source,
      message = d.message,
    })
  end
  table.sort(list, function(a, b)
    return a.lnum < b.lnum or (a.lnum == b.lnum and a.col < b.col)
  end)
  return list
end

local function diagnostics_match(got, want)
  if #got ~= #want then
    return false
  end
  for i, w in ipairs(want) do
    local g = got[i]
    if
      g.lnum ~= w.lnum
      or g.col ~= w.col
      or g.end_lnum ~= w.end_lnum
      or g.end_col ~= w.end_col
      or g.severity ~= vim.diagnostic.severity.WARN
      or g.source ~= 'language_server'
      or g.message ~= 'TODO: unfinished work'
    then
      return false
    end
  end
  return true
end

-- Waits until the buffer's diagnostics are one per TODO of its current
-- text, at the right places, and records the check `name`.
local function check_diagnostics(name, bufnr)
  local want = expected_todos(vim.api.nvim_buf_get_lines(bufnr, 0, -1, true))
  local matched = vim.wait(TIMEOUT, function()
    return diagnostics_match(diagnostics_now(bufnr), want)
  end, 10)
  check(
    name,
    matched,
    string.format(
      'expected %d Warning diagnostics (source language_server, message "TODO: unfinished work") at %s; vim.diagnostic.get shows %s',
      #want,
      show(want),
      show(diagnostics_now(bufnr))
    )
  )
end

-- One request through the client, synchronously: its result, or nil and
-- a description of what went wrong.
local function request(bufnr, method, params, timeout)
  local responses, err = vim.lsp.buf_request_sync(bufnr, method, params, timeout or TIMEOUT)
  if not responses then
    return nil, string.format('%s: no response (%s)', method, tostring(err))
  end
  local _, response = next(responses)
  if not response then
    return nil, method .. ': no client answered'
  end
  if response.err or response.error then
    return nil, string.format('%s: error %s', method, show(response.err or response.error))
  end
  return response.result, nil
end

-- The UTF-16 position of byte `col` (0-based) of line `lnum` (0-based),
-- with the cursor put there, as Neovim computes it for a request.
local function position_at(bufnr, lnum, col)
  vim.api.nvim_win_set_cursor(0, { lnum + 1, col })
  local params = vim.lsp.util.make_position_params(0, 'utf-16')
  assert(params.textDocument.uri == vim.uri_from_bufnr(bufnr))
  return params
end

local function main()
  -- Every message in and out, in stdpath('cache')/lsp.log (the test's
  -- temporary directory), which the test shows when a check fails.
  vim.lsp.set_log_level('debug')
  -- The document: words, a line with characters that take more bytes in
  -- UTF-8 than code units in UTF-16 (`→` 3 bytes / 1 unit, the emoji
  -- 4 bytes / 2 units) before a TODO, and words for completion.
  local dir = vim.fn.fnamemodify(file, ':h')
  vim.fn.mkdir(dir, 'p')
  vim.fn.writefile({
    'alpha beta gamma alpha',
    'note → 😀 TODO fix beta',
    'between bravo better',
  }, file)
  vim.cmd('edit ' .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  vim.bo[bufnr].filetype = 'text'

  local exit = {}
  local configuration_requests = {}
  local progress = {}
  local created_tokens = {}
  local default_handlers = vim.lsp.handlers
  local client_id = vim.lsp.start_client({
    name = 'language_server',
    cmd = { server },
    root_dir = dir,
    settings = { languageServer = { delayMs = 5 } },
    handlers = {
      ['workspace/configuration'] = function(err, result, ctx, config)
        table.insert(configuration_requests, result)
        return default_handlers['workspace/configuration'](err, result, ctx, config)
      end,
      ['window/workDoneProgress/create'] = function(err, result, ctx, config)
        table.insert(created_tokens, result and result.token)
        return default_handlers['window/workDoneProgress/create'](err, result, ctx, config)
      end,
      ['$/progress'] = function(err, result, ctx, config)
        table.insert(progress, { token = result.token, kind = result.value and result.value.kind })
        return default_handlers['$/progress'](err, result, ctx, config)
      end,
    },
    on_exit = function(code, signal)
      exit.code = code
      exit.signal = signal
    end,
  })
  check('start_client returns a client id', client_id ~= nil, 'vim.lsp.start_client returned nil')
  if not client_id then
    return
  end
  check(
    'the client attaches to the buffer',
    vim.lsp.buf_attach_client(bufnr, client_id),
    'vim.lsp.buf_attach_client returned false'
  )
  local client = vim.lsp.get_client_by_id(client_id)
  local initialized = vim.wait(TIMEOUT, function()
    return client.initialized == true or exit.code ~= nil
  end, 10)
  check(
    'initialize is answered',
    initialized and client.initialized,
    string.format('client.initialized = %s, exit = %s', tostring(client.initialized), show(exit))
  )
  if not client.initialized then
    return
  end
  local caps = client.server_capabilities or {}
  local sync = caps.textDocumentSync
  check(
    'the capabilities: incremental sync, hover, completion, the countWords command',
    type(sync) == 'table'
      and sync.openClose == true
      and sync.change == 2
      and caps.hoverProvider == true
      and type(caps.completionProvider) == 'table'
      and type(caps.executeCommandProvider) == 'table'
      and vim.tbl_contains(caps.executeCommandProvider.commands or {}, 'languageServer.countWords'),
    'server_capabilities = ' .. show(caps)
  )
  check(
    'Neovim chose incremental didChange',
    client.resolved_capabilities and client.resolved_capabilities.text_document_did_change == 2,
    'resolved text_document_did_change = '
      .. tostring(client.resolved_capabilities and client.resolved_capabilities.text_document_did_change)
  )

  -- didOpen -> diagnostics.
  check_diagnostics('diagnostics after didOpen: one Warning per TODO, UTF-16 columns', bufnr)

  -- An edit inside the line after the multi-byte characters (an
  -- incremental change whose range Neovim computes in UTF-16): a second
  -- TODO and more words.
  local line1 = vim.api.nvim_buf_get_lines(bufnr, 1, 2, true)[1]
  local at = assert(line1:find('beta', 1, true)) - 1
  vim.api.nvim_buf_set_text(bufnr, 1, at, 1, at, { 'TODO alpha ' })
  check_diagnostics('diagnostics after an edit within a line: the second TODO', bufnr)

  -- Lines added at the end, one with a third TODO.
  vim.api.nvim_buf_set_lines(bufnr, -1, -1, true, { 'gamma delta TODO alpha beta', 'be' })
  check_diagnostics('diagnostics after lines are appended', bufnr)

  -- The first line deleted: every diagnostic moves up one line.
  vim.api.nvim_buf_set_lines(bufnr, 0, 1, true, {})
  check_diagnostics('diagnostics after a line is deleted', bufnr)

  -- A change spanning lines: the end of the first line and the start of
  -- the second replaced by a word (the TODO on the first line stays).
  local first = vim.api.nvim_buf_get_lines(bufnr, 0, 1, true)[1]
  vim.api.nvim_buf_set_text(bufnr, 0, #first - #'beta', 1, #'between', { 'joined' })
  check_diagnostics('diagnostics after an edit across two lines', bufnr)

  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, true)
  local all_words = words(lines)
  local function occurrences(word)
    local n = 0
    for _, w in ipairs(all_words) do
      if w == word then
        n = n + 1
      end
    end
    return n
  end

  -- Hover: on a word after the multi-byte characters, and just after a
  -- word's last character.
  for _, case in ipairs({
    { name = 'hover inside `alpha`, after multi-byte characters', word = 'alpha', line_pattern = 'TODO alpha', inside = 2 },
    { name = 'hover inside `fix`, after multi-byte characters', word = 'fix', line_pattern = 'fix', inside = 1 },
    { name = 'hover just after `alpha`', word = 'alpha', line_pattern = 'delta TODO alpha', inside = #'alpha' },
  }) do
    local lnum, byte_start
    for i, line in ipairs(lines) do
      local s = line:find(case.line_pattern, 1, true)
      if s then
        lnum = i - 1
        byte_start = s - 1 + #case.line_pattern - #case.word
        break
      end
    end
    assert(lnum, 'no line with ' .. case.line_pattern)
    local params = position_at(bufnr, lnum, byte_start + case.inside)
    local result, err = request(bufnr, 'textDocument/hover', params)
    local line = lines[lnum + 1]
    local _, start16 = vim.str_utfindex(line, byte_start)
    local _, end16 = vim.str_utfindex(line, byte_start + #case.word)
    local want_value = string.format('`%s`: %d occurrence(s)', case.word, occurrences(case.word))
    local contents = result and result.contents
    local range = result and result.range
    check(
      case.name,
      type(contents) == 'table'
        and contents.kind == 'markdown'
        and contents.value == want_value
        and type(range) == 'table'
        and range.start.line == lnum
        and range.start.character == start16
        and range['end'].line == lnum
        and range['end'].character == end16,
      string.format(
        'at line %d, UTF-16 character %d: expected markdown %q over UTF-16 %d..%d of line %d; got %s%s',
        lnum,
        params.position.character,
        want_value,
        start16,
        end16,
        lnum,
        show(result),
        err and (' (' .. err .. ')') or ''
      )
    )
  end

  -- Hover where there is no word -> null.
  do
    local lnum
    for i, line in ipairs(lines) do
      if line:find('→', 1, true) then
        lnum = i - 1
      end
    end
    local col = assert(lines[lnum + 1]:find('→', 1, true)) - 1
    local params = position_at(bufnr, lnum, col)
    local result, err = request(bufnr, 'textDocument/hover', params)
    check(
      'hover where there is no word is null',
      err == nil and result == nil,
      string.format('got %s %s', show(result), tostring(err))
    )
  end

  -- Completion at the end of the last line, `be`.
  do
    local lnum = #lines - 1
    assert(lines[lnum + 1] == 'be')
    local params = position_at(bufnr, lnum, 2)
    -- The cursor cannot sit past the end in normal mode: ask at character 2.
    params.position.character = 2
    local result, err = request(bufnr, 'textDocument/completion', params)
    local items = vim.lsp.util.extract_completion_items(result)
    local labels, kinds_ok = {}, true
    for _, item in ipairs(items) do
      table.insert(labels, item.label)
      kinds_ok = kinds_ok and item.kind == 1
    end
    local want = {}
    local seen = {}
    for _, w in ipairs(all_words) do
      if w:sub(1, 2) == 'be' and w ~= 'be' and not seen[w] then
        seen[w] = true
        table.insert(want, w)
      end
    end
    table.sort(want)
    check(
      'completion after `be`: the distinct words starting with it, sorted, kind Text',
      err == nil and vim.deep_equal(labels, want) and kinds_ok,
      string.format('expected labels %s (kind 1); got %s %s', show(want), show(result), tostring(err))
    )
  end

  -- The long command through Neovim: the server asks Neovim for its
  -- configuration (`settings` above) and reports progress, which Neovim
  -- accepts as it declares window.workDoneProgress.
  do
    local result, err = request(bufnr, 'workspace/executeCommand', {
      command = 'languageServer.countWords',
      arguments = { vim.uri_from_bufnr(bufnr) },
    }, 30000)
    check(
      'workspace/executeCommand languageServer.countWords counts the buffer words',
      err == nil and result == #all_words,
      string.format('expected %d; got %s %s', #all_words, show(result), tostring(err))
    )
    local config_ok = #configuration_requests == 1
      and type(configuration_requests[1]) == 'table'
      and vim.deep_equal(configuration_requests[1].items, { { section = 'languageServer' } })
    check(
      'the server asked Neovim for workspace/configuration, section languageServer',
      config_ok,
      'workspace/configuration requests: ' .. show(configuration_requests)
    )
    local token = created_tokens[1]
    local kinds = {}
    local same_token = true
    for _, p in ipairs(progress) do
      table.insert(kinds, p.kind)
      same_token = same_token and p.token == token
    end
    local reports = #kinds - 2
    check(
      'progress: window/workDoneProgress/create, then begin, reports, end, all with its token',
      #created_tokens == 1
        and type(token) == 'string'
        and same_token
        and kinds[1] == 'begin'
        and kinds[#kinds] == 'end'
        and reports >= 1
        and #vim.tbl_filter(function(k)
            return k == 'report'
          end, kinds)
          == reports,
      string.format('created %s; $/progress %s; %d lines', show(created_tokens), show(progress), #lines)
    )
  end

  -- shutdown, then exit: the server exits with 0.
  client.stop()
  local exited = vim.wait(TIMEOUT, function()
    return exit.code ~= nil
  end, 10)
  check(
    'client.stop(): shutdown then exit, and the server exits with code 0',
    exited and exit.code == 0 and exit.signal == 0,
    string.format('on_exit: %s', exited and show(exit) or 'not called in time')
  )
end

local ok, err = xpcall(main, debug.traceback)
if not ok then
  check('the script ran to its end', false, tostring(err))
end
finish()
