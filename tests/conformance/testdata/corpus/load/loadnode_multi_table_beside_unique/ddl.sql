CREATE TABLE mt_dup (
    k1 INT NULL,
    v VARCHAR(10) NULL
) DUPLICATE KEY(k1)
DISTRIBUTED BY HASH(k1) BUCKETS 1
PROPERTIES ("replication_num" = "1");
CREATE TABLE mt_unique (
    k1 INT NOT NULL,
    v INT NULL
) UNIQUE KEY(k1)
DISTRIBUTED BY HASH(k1) BUCKETS 1
PROPERTIES ("replication_num" = "1", "enable_unique_key_merge_on_write" = "true");
