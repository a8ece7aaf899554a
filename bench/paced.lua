-- wrk: a fixed pace per connection (each waits PACE_MS after an answer), so two runs offer the same load
local pace = tonumber(os.getenv("PACE_MS") or "10")
function delay()
  return pace
end
