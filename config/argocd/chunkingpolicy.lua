-- Argo CD health of a parentrag.io ChunkingPolicy, from its conditions.
-- Degraded: Stalled (the policy cannot be compiled, or it is deleted while
-- Corpora still use it). Progressing: the operator has not yet checked
-- this generation. Healthy: Ready, with the revision it names.
local hs = {}
local conditions = {}
if obj.status ~= nil and obj.status.conditions ~= nil then
  for _, c in ipairs(obj.status.conditions) do
    conditions[c.type] = c
  end
end
local ready, stalled = conditions["Ready"], conditions["Stalled"]
if stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = stalled.message
  return hs
end
if ready == nil or (obj.status.observedGeneration or 0) < (obj.metadata.generation or 0) then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to check the policy"
  return hs
end
if ready.status == "True" then
  hs.status = "Healthy"
else
  hs.status = "Degraded"
end
hs.message = ready.message
return hs
