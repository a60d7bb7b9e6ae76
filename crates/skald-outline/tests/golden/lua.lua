local M = {}
function M.greet(name) return name end
function M:method() end
local function helper() end
function global_fn() end
local f = function() end
return M
