-- wrk: POST a 1 KiB JSON body
wrk.method = "POST"
wrk.body = '{"data":"' .. string.rep("x", 1024 - 11) .. '"}'
wrk.headers["Content-Type"] = "application/json"
