CREATE TABLE IF NOT EXISTS tz_date (
    id INT NULL,
    dt_datetime DATETIME NULL,
    dt_date DATE NULL
) DUPLICATE KEY(id)
DISTRIBUTED BY HASH(id) BUCKETS 3
PROPERTIES ("replication_num" = "1");
