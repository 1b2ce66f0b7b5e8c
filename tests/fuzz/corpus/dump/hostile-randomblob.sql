-- servesim perf-db dump
-- schema_version 1
BEGIN TRANSACTION;
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS gpus(id INTEGER PRIMARY KEY, name TEXT NOT NULL, sms INTEGER NOT NULL, cc TEXT NOT NULL, sm_clock_mhz INTEGER NOT NULL, mem_clock_mhz INTEGER NOT NULL, driver TEXT NOT NULL, cuda TEXT NOT NULL, backend TEXT NOT NULL, UNIQUE(name, sms, cc, sm_clock_mhz, mem_clock_mhz, driver, cuda, backend));
CREATE TABLE IF NOT EXISTS points(id INTEGER PRIMARY KEY, gpu_id INTEGER NOT NULL REFERENCES gpus(id), op TEXT NOT NULL, dtype TEXT NOT NULL, kernel TEXT NOT NULL, kernel_version INTEGER NOT NULL, m INTEGER NOT NULL DEFAULT 0, n INTEGER NOT NULL DEFAULT 0, k INTEGER NOT NULL DEFAULT 0, batch INTEGER NOT NULL DEFAULT 0, ctx INTEGER NOT NULL DEFAULT 0, heads INTEGER NOT NULL DEFAULT 0, kv_heads INTEGER NOT NULL DEFAULT 0, head_dim INTEGER NOT NULL DEFAULT 0, groups INTEGER NOT NULL DEFAULT 0, bytes INTEGER NOT NULL DEFAULT 0, ranks INTEGER NOT NULL DEFAULT 0, reps INTEGER NOT NULL, median_s REAL NOT NULL, p10_s REAL NOT NULL, p90_s REAL NOT NULL, tflops REAL, gbps REAL, frac_of_peak REAL, check_err REAL, measured_at TEXT NOT NULL, UNIQUE(gpu_id, op, dtype, kernel, kernel_version, m, n, k, batch, ctx, heads, kv_heads, head_dim, groups, bytes, ranks));
CREATE INDEX IF NOT EXISTS points_lookup ON points(gpu_id, op, dtype);
INSERT OR IGNORE INTO meta(key, value) VALUES('schema_version', '1');
INSERT OR IGNORE INTO gpus(name, sms, cc, sm_clock_mhz, mem_clock_mhz, driver, cuda, backend) VALUES('NVIDIA H200', 132, '9.0', 1980, 3201, '13.0', '13.0', 'gpu');
INSERT OR IGNORE INTO gpus(name, sms, cc, sm_clock_mhz, mem_clock_mhz, driver, cuda, backend) VALUES(randomblob(900000000), 1, '9.0', 1, 1, '', '', 'gpu');
COMMIT;
