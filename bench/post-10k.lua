-- wrk: POST a 10 KiB JSON body
wrk.method = "POST"
wrk.body = '{"data":"' .. string.rep("x", 10240 - 11) .. '"}'
wrk.headers["Content-Type"] = "application/json"
