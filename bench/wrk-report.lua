-- wrk script of the benchmark suite. Arguments after `--`: method; pause in ms before each
-- request of a connection (0: none, load as fast as the server answers); an optional JSON
-- body in which every `[<id>]` becomes a unique id, so each POST creates a distinct user.
-- At the end it prints the summary as one JSON line for bench/load-generator.ts to read.
local run = tostring(os.time()) .. tostring(math.random(100000, 999999))
local counter = 0

function init(args)
  wrk.method = args[1] or "GET"
  local pause = tonumber(args[2] or "0")
  if pause > 0 then
    delay = function() return pause end
  end
  local template = args[3]
  if template == nil then return end
  wrk.headers["Content-Type"] = "application/json"
  -- Only a request() of our own makes wrk build a new request each time.
  request = function()
    counter = counter + 1
    local body = template:gsub("%[<id>%]", run .. "-" .. counter)
    return wrk.format(nil, nil, nil, body)
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"durationUs":%d,"non2xx":%d,"socketErrors":%d,"timeouts":%d,"p50Us":%d,"p99Us":%d}\n',
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write, e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
