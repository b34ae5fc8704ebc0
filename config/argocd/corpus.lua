-- Argo CD health of a parentrag.io Corpus, from spec.suspend and its
-- kstatus conditions. Suspended: spec.suspend is true (whatever the status
-- says), or a built revision waits for the promote annotation (Manual
-- promotion, an inconclusive quality gate). Degraded: Stalled (a failed
-- quality gate or verification, a missing policy), or Ready False with no
-- work under way. Progressing: a revision is being built, or the operator
-- has not yet seen this generation. Healthy: Ready on the active revision.
local hs = {}
local conditions = {}
if obj.status ~= nil and obj.status.conditions ~= nil then
  for _, c in ipairs(obj.status.conditions) do
    conditions[c.type] = c
  end
end
local ready, stalled, reconciling = conditions["Ready"], conditions["Stalled"], conditions["Reconciling"]
-- spec.suspend first, whatever the status says: the operator may not have
-- seen the suspension yet, or may not be running.
if obj.spec ~= nil and obj.spec.suspend == true then
  hs.status = "Suspended"
  if ready ~= nil and ready.reason == "Suspended" then
    hs.message = ready.message
  else
    hs.message = "reconciliation is suspended (spec.suspend); set spec.suspend to false to resume"
  end
  return hs
end
if ready == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to report the Corpus's status"
  return hs
end
if stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = stalled.message
  return hs
end
local observed = obj.status.observedGeneration or 0
if reconciling == nil and observed < (obj.metadata.generation or 0) then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to observe generation " .. obj.metadata.generation
  return hs
end
if reconciling ~= nil and reconciling.status == "True" then
  hs.status = "Progressing"
  hs.message = reconciling.message
  return hs
end
if ready.status == "True" then
  local candidate = obj.status.candidate
  if candidate ~= nil and (candidate.outcome == "AwaitingPromotion" or candidate.outcome == "Paused") then
    hs.status = "Suspended"
    hs.message = ready.message
    return hs
  end
  hs.status = "Healthy"
  hs.message = ready.message
  return hs
end
if ready.status == "False" then
  hs.status = "Degraded"
  hs.message = ready.message
  return hs
end
hs.status = "Progressing"
hs.message = ready.message
return hs
