-- The gateway and the logs service each have a database of their own (some table names are shared).
CREATE DATABASE gerbang_logs;
