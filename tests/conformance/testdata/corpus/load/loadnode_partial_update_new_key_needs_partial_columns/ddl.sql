CREATE TABLE pu_new_key (
    k1 INT NOT NULL,
    v1 INT NULL,
    v2 INT NULL
) UNIQUE KEY(k1)
DISTRIBUTED BY HASH(k1) BUCKETS 1
PROPERTIES ("replication_num" = "1", "enable_unique_key_merge_on_write" = "true");
