package api

// SinkProgress is a job's authoritative position in its sink: what a sink
// stores with each commit and returns to a job actor that starts (the sink's
// Progress), and what the embedded store, which is both the metadata store
// and a sink, hands over from its recovery scan (metastore.JobState). It is
// a record, not a wire message: it lives here so that the metadata store and
// the sink contract share it without importing each other. sink.Progress
// names it in the sink contract.
type SinkProgress struct {
	// Positions maps partition to the next position to read. Never nil.
	Positions map[int32]int64
	// Checkpoints maps partition to its opaque source checkpoint. Never nil.
	Checkpoints map[int32][]byte
	// Stats is the job's statistics; zero until the first commit. Never nil.
	Stats *JobStats
	// Fence is the newest Commit.Fence stored; 0 before the first commit.
	Fence uint64
}
