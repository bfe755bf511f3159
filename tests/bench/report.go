package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// WriteJSON writes r as indented JSON.
func WriteJSON(w io.Writer, r *Results) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes r as readable tables: throughput (the baselines in the same
// table), create latency, scale, and the targets.
func WriteText(w io.Writer, r *Results) error {
	s := r.Settings
	fmt.Fprintf(w, "loadnode bench: %d CPUs, %s %s/%s, %s; broker: %s\n", r.Host.CPUs, r.Host.GoVersion, r.Host.OS, r.Host.Arch, cgoText(r.Host.CgoEnabled), s.Broker)
	fmt.Fprintf(w, "%d records of ~%d bytes per topic; median of %d runs after a warm-up; job batches: max_batch_rows %d, max_batch_interval %dms, tasks %s\n\n",
		s.Records, s.RecordBytes, s.Runs, s.BatchRows, s.BatchIntervalMs, tasksText(s.Tasks))
	if len(r.Throughput) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "scenario\tformat\tpartitions\trecords\tseconds\trecords/s\tMB/s\tCPU s/M rec\tallocs/rec\tfaults/rec\tbroker CPU s/M\tcores busy\trows/batch\tx ceiling\tx kcat\tx store\tcommit rows/s\tcommit x store\t")
		for _, t := range r.Throughput {
			parts := "-"
			if t.Partitions > 0 {
				parts = fmt.Sprint(t.Partitions)
			}
			if t.Error != "" {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\tfailed\t\t\t\t\t\t\t\t\t\t\t\t\t\t\n", scenarioLabel(t.Scenario), t.Format, parts, t.Records)
				continue
			}
			if t.Skipped != "" {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\tskipped\t\t\t\t\t\t\t\t\t\t\t\t\t\t\n", scenarioLabel(t.Scenario), t.Format, parts, t.Records)
				continue
			}
			allocs, faults := fmt.Sprintf("%.1f", t.AllocsPerRecord), fmt.Sprintf("%.3f", t.FaultsPerRecord)
			if t.Scenario == ScenarioKcat {
				allocs, faults = "-", "-" // another process
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%.2f\t%.0f\t%.1f\t%.2f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
				scenarioLabel(t.Scenario), t.Format, parts, t.Records, t.Seconds, t.RecordsPerSec, t.MBPerSec,
				t.CPUSecPerMillion, allocs, faults, numOrDash(t.BrokerCPUSecPerMillion, "%.2f"), numOrDash(t.CoresBusy, "%.2f"), numOrDash(t.AvgBatchRows, "%.0f"), ratio(t.E2EToCeilingRatio), ratio(t.E2EToKcatRatio), ratio(t.E2EToStoreRatio),
				numOrDash(t.CommitRowsPerSec, "%.0f"), ratio(t.CommitToStoreRatio))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w, "  ceiling = raw franz-go consumer (direct partitions, default fetch sizes) discarding records;")
		if kcatRan(r) {
			fmt.Fprintf(w, "  kcat = `kcat -C -o beginning -e -q -f '%%S\\n'` (%s) child process, lines counted; its CPU s is kcat's own;\n", r.Settings.Kcat)
		}
		if reason := kcatSkipped(r); reason != "" {
			fmt.Fprintf(w, "  kcat skipped: %s;\n", reason)
		}
		fmt.Fprintln(w, "  loadnode = job create to committed offsets = end offsets, exactly once (loaded rows checked), in-process node;")
		if kcatRan(r) {
			fmt.Fprintln(w, "  x kcat (e2e rows) = loadnode records/s over kcat's on the same topic;")
		}
		fmt.Fprintln(w, "  store = the same rows pre-encoded, synced CommitBatch of max_batch_rows with progress and stats, no source;")
		fmt.Fprintln(w, "  faults/rec = minor + major page faults of the bench process (getrusage) over the measured window, per record;")
		fmt.Fprintln(w, "  broker CPU s/M = the broker child's CPU over the same window; cores busy = the whole machine's non-idle cores over it (/proc/stat, steal included);")
		fmt.Fprintln(w, "  commit rows/s = records over the seconds the job spent in synced commits (the node's loadnode_batch_commit_seconds_sum).")
		writePostgresNote(w, r)
		fmt.Fprintln(w)
	}
	if c := r.Create; c != nil {
		fmt.Fprintf(w, "create (%d jobs per run, median of %d runs):\n", c.Jobs, c.Runs)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "\tp50 ms\tp99 ms\t")
		fmt.Fprintf(tw, "job create (client, 1 at a time)\t%.3f\t%.3f\t\n", c.CreateP50Ms, c.CreateP99Ms)
		fmt.Fprintf(tw, "bare synced 1 KB Pebble commit\t%.3f\t%.3f\t\n", c.PebbleSyncP50Ms, c.PebbleSyncP99Ms)
		fmt.Fprintf(tw, "client round trip (ping, no store)\t%.3f\t%.3f\t\n", c.PingP50Ms, c.PingP99Ms)
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(w, "  creates/s: %.0f with 1 client, %.0f with 16 concurrent clients (%.2fx)\n", c.CreatesPerSec1, c.CreatesPerSec16, c.ConcurrencyFactor)
		fmt.Fprintf(w, "  per create, with 1 / 16 clients: CPU %.3f / %.3f ms (node and clients, in this process), the broker's %.3f / %.3f ms; %.0f / %.0f heap allocations\n\n",
			c.CPUMsPerCreate1, c.CPUMsPerCreate16, c.BrokerCPUMsPerCreate1, c.BrokerCPUMsPerCreate16, c.AllocsPerCreate1, c.AllocsPerCreate16)
	}
	if len(r.Scale) > 0 {
		fmt.Fprintln(w, "scale of idle jobs (`loadnode serve` child process, 16 concurrent creators):")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "jobs\tcreated\tcreate s\tcreates/s\tRSS base MB\tRSS MB\tKB/job\tnode CPU s\tfds\tthreads\tstop s\trestart ready s\tlisted\tlist s\tall listed s\tshown\tall shown s\t")
		for _, s := range r.Scale {
			fmt.Fprintf(tw, "%d\t%d\t%.1f\t%.0f\t%.0f\t%.0f\t%.1f\t%.1f\t%d\t%d\t%.2f\t%.2f\t%d\t%.2f\t%.2f\t%d\t%.2f\t\n", s.Jobs, s.Created, s.CreateSeconds, s.CreatesPerSec,
				s.RSSBaseMB, s.RSSAfterMB, s.RSSPerJobKB, s.NodeCPUSeconds, s.FDs, s.Threads, s.StopSeconds, s.RestartReadySeconds, s.Listed, s.ListSeconds, s.RestartAllListedSeconds, s.Shown, s.RestartAllShownSeconds)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, s := range r.Scale {
			if s.Created < s.Jobs {
				fmt.Fprintf(w, "  %d jobs: extrapolated create time %.0fs, RSS %.0f MB\n", s.Jobs, s.ExtrapolatedCreateSeconds, s.ExtrapolatedRSSMB)
			}
			for _, n := range s.Notes {
				fmt.Fprintf(w, "  %d jobs: %s\n", s.Jobs, n)
			}
		}
		fmt.Fprintln(w)
	}
	if r.Cluster != nil {
		var b strings.Builder
		writeClusterText(&b, r.Cluster)
		fmt.Fprintln(w, b.String())
	}
	if r.Freshness != nil {
		if err := writeFreshnessText(w, r.Freshness); err != nil {
			return err
		}
	}
	if len(r.Targets) > 0 {
		fmt.Fprintln(w, "targets:")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, t := range r.Targets {
			met := "MISSED"
			if t.Met {
				met = "met"
			}
			note := ""
			if t.Note != "" {
				note = "(" + t.Note + ")"
			}
			if t.NotMeasured {
				fmt.Fprintf(tw, "  %s\twant %s %s\tnot measured\t\t%s\n", t.Name, t.Want, t.Unit, note)
				continue
			}
			fmt.Fprintf(tw, "  %s\twant %s %s\tmeasured %.2f %s\t%s\t%s\n", t.Name, t.Want, t.Unit, t.Measured, t.Unit, met, note)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, e := range r.Errors {
		fmt.Fprintf(w, "error: %s\n", e)
	}
	fmt.Fprintf(w, "total %.0fs\n", r.Seconds)
	return nil
}

// cgoText says how the binary was built, for the header.
func cgoText(v string) string {
	switch v {
	case "0":
		return "built with CGO_ENABLED=0 (Pebble memtables on the Go heap; `make loadnode`)"
	case "1":
		return "built with CGO_ENABLED=1 (Pebble memtables calloc'd; the release build is `make loadnode`, CGO_ENABLED=0)"
	}
	return "CGO_ENABLED unknown (no build info)"
}

// kcatRan reports whether a kcat row was measured.
func kcatRan(r *Results) bool {
	for _, t := range r.Throughput {
		if t.Scenario == ScenarioKcat && t.Skipped == "" && t.Error == "" {
			return true
		}
	}
	return false
}

// kcatSkipped is why the kcat rows were skipped, or "".
func kcatSkipped(r *Results) string {
	for _, t := range r.Throughput {
		if t.Scenario == ScenarioKcat && t.Skipped != "" {
			return t.Skipped
		}
	}
	return ""
}

func tasksText(n int) string {
	if n == 0 {
		return "spec default (3)"
	}
	return fmt.Sprint(n)
}

func scenarioLabel(s string) string {
	switch s {
	case ScenarioCeiling:
		return "ceiling (franz-go)"
	case ScenarioKcat:
		return "kcat (librdkafka)"
	case ScenarioE2E:
		return "loadnode e2e"
	case ScenarioStore:
		return "store ceiling"
	case scenarioPGCeiling:
		return "postgres ceiling (COPY)"
	case scenarioPGE2E:
		return "loadnode e2e -> postgres"
	}
	return s
}

func ratio(r *float64) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f", *r)
}

func numOrDash(v float64, f string) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf(f, v)
}

// WriteSVG writes a grouped bar chart of records/s by format and partitions:
// the franz-go ceiling next to loadnode end to end, on a log scale.
func WriteSVG(w io.Writer, r *Results) error {
	type group struct {
		label              string
		ceiling, kcat, e2e float64
	}
	var groups []group
	idx := map[string]int{}
	for _, t := range r.Throughput {
		pgRow := t.Scenario == scenarioPGCeiling || t.Scenario == scenarioPGE2E
		if t.Scenario != ScenarioCeiling && t.Scenario != ScenarioKcat && t.Scenario != ScenarioE2E && !pgRow {
			continue
		}
		k := fmt.Sprintf("%s, %d p", t.Format, t.Partitions)
		if pgRow {
			// The PostgreSQL pair: its ceiling (COPY) is the ceiling bar.
			k = fmt.Sprintf("postgres, %d p", t.Partitions)
		}
		i, ok := idx[k]
		if !ok {
			i = len(groups)
			idx[k] = i
			groups = append(groups, group{label: k})
		}
		switch t.Scenario {
		case ScenarioCeiling, scenarioPGCeiling:
			groups[i].ceiling = t.RecordsPerSec
		case ScenarioKcat:
			groups[i].kcat = t.RecordsPerSec
		default:
			groups[i].e2e = t.RecordsPerSec
		}
	}
	const (
		left, right, top, bottom = 80.0, 20.0, 50.0, 70.0
		groupW, barW             = 150.0, 40.0
		plotH                    = 320.0
	)
	width := max(left+right+groupW*float64(max(len(groups), 1)), left+right+720) // room for the legend
	height := top + plotH + bottom
	maxV := 1.0
	for _, g := range groups {
		maxV = max(maxV, g.ceiling, g.kcat, g.e2e)
	}
	lo := 1e3
	hi := math.Pow(10, math.Ceil(math.Log10(maxV)))
	y := func(v float64) float64 {
		if v < lo {
			v = lo
		}
		return top + plotH - plotH*(math.Log10(v)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo))
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%.0f" y="20" font-size="15" font-weight="bold">records/s: loadnode end to end (exactly once) vs raw franz-go ceiling and kcat</text>`+"\n", left)
	fmt.Fprintf(&b, `<text x="%.0f" y="38" fill="#555">%d records of ~%d B per topic, %d CPUs, median of %d runs, log scale</text>`+"\n",
		left, r.Settings.Records, r.Settings.RecordBytes, r.Host.CPUs, r.Settings.Runs)
	for v := lo; v <= hi; v *= 10 {
		fmt.Fprintf(&b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", left, width-right, y(v), y(v))
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" text-anchor="end" fill="#555">%s</text>`+"\n", left-6, y(v)+4, siNum(v))
	}
	for i, g := range groups {
		x0 := left + groupW*float64(i) + (groupW-3*barW)/2
		bars := []struct {
			v     float64
			color string
		}{{g.ceiling, "#9aa5b1"}, {g.kcat, "#e0a030"}, {g.e2e, "#2b7bb9"}}
		for j, bar := range bars {
			x := x0 + barW*float64(j)
			if bar.v <= 0 {
				continue
			}
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.0f" height="%.1f" fill="%s"/>`+"\n", x+2, y(bar.v), barW-4, top+plotH-y(bar.v), bar.color)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="10">%s</text>`+"\n", x+barW/2, y(bar.v)-4, siNum(bar.v))
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle">%s</text>`+"\n", x0+1.5*barW, top+plotH+18, g.label)
		if g.ceiling > 0 && g.e2e > 0 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle" fill="#555">%.2fx</text>`+"\n", x0+1.5*barW, top+plotH+34, g.e2e/g.ceiling)
		}
	}
	ly := top + plotH + 56
	fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="12" height="12" fill="#9aa5b1"/><text x="%.0f" y="%.0f">ceiling: raw franz-go consumer; postgres: COPY</text>`+"\n", left, ly-10, left+16, ly)
	fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="12" height="12" fill="#e0a030"/><text x="%.0f" y="%.0f">plain kcat consume</text>`+"\n", left+230, ly-10, left+246, ly)
	fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="12" height="12" fill="#2b7bb9"/><text x="%.0f" y="%.0f">loadnode end to end (ratio to the ceiling below each group)</text>`+"\n", left+380, ly-10, left+396, ly)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// siNum formats v as 1.2k, 3.4M.
func siNum(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3gk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// writePostgresNote adds the postgres rows' PostgreSQL CPU and ratio to the
// throughput table's notes.
func writePostgresNote(w io.Writer, r *Results) {
	for _, t := range r.Throughput {
		if (t.Scenario != scenarioPGCeiling && t.Scenario != scenarioPGE2E) || t.Error != "" || t.Skipped != "" {
			continue
		}
		line := fmt.Sprintf("  %s: %.0f records/s, %.1f MB/s; CPU s per million rows: loadnode %.2f, PostgreSQL %.2f",
			scenarioLabel(t.Scenario), t.RecordsPerSec, t.MBPerSec, t.CPUSecPerMillion, t.ServerCPUSecPerMillion)
		if t.PGToCeilingRatio != nil {
			line += fmt.Sprintf("; %.2f x the postgres ceiling", *t.PGToCeilingRatio)
		}
		if len(t.PGRunRatios) > 0 {
			rs := make([]string, len(t.PGRunRatios))
			for i, v := range t.PGRunRatios {
				rs[i] = fmt.Sprintf("%.2f", v)
			}
			line += " (each run over the ceiling run before it: " + strings.Join(rs, ", ") + ")"
		}
		fmt.Fprintln(w, line+";")
	}
}
