-- A least-recently-used cache.
local Cache = {}
Cache.__index = Cache

local DEFAULT_SIZE = 128

function Cache.new(size)
  local self = setmetatable({}, Cache)
  self.size = size or DEFAULT_SIZE
  self.items, self.order = {}, {}
  return self
end

function Cache:get(key)
  local v = self.items[key]
  if v ~= nil then
    self:touch(key)
  end
  return v
end

function Cache:touch(key)
  for i, k in ipairs(self.order) do
    if k == key then
      table.remove(self.order, i)
      break
    end
  end
  table.insert(self.order, key)
end

local n = 0
while n < 0 do
  n = n + 1
end

repeat
  n = n - 1
until n <= 0

return Cache
