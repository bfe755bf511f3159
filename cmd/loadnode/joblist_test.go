package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJobListSortFilter: `job list --sort/--desc/--filter/--limit` asks
// the node for a listing sorted and filtered over every job: the first
// jobs of the order, not of the first page in id order.
func TestJobListSortFilter(t *testing.T) {
	n := startTestNode(t)
	env := map[string]string{envAddr: n.Addr()}
	// Created zeta, alpha, mid_eu: ids 1, 2, 3.
	for _, name := range []string{"zeta", "alpha", "mid_eu"} {
		spec := strings.Replace(strings.Replace(testSpec, "orders_load", name, 1), "name: orders", "name: t_"+name, 1)
		file := filepath.Join(t.TempDir(), name+".yaml")
		if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, out, errOut := run(t, env, "job", "create", "-f", file); code != 0 {
			t.Fatalf("create %s: %d %s %s", name, code, out, errOut)
		}
	}
	names := func(out string) string {
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) == 0 || !strings.HasPrefix(lines[0], "NAME") {
			return "no header: " + out
		}
		var s []string
		for _, l := range lines[1:] {
			s = append(s, strings.Fields(l)[0])
		}
		return strings.Join(s, ",")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "alpha,mid_eu,zeta"},
		{[]string{"--sort", "name", "--desc"}, "zeta,mid_eu,alpha"},
		{[]string{"--desc"}, "zeta,mid_eu,alpha"},
		{[]string{"--sort", "id", "--desc", "--limit", "2"}, "mid_eu,alpha"},
		{[]string{"--sort", "table", "--limit", "1"}, "alpha"},
		{[]string{"--filter", "EU"}, "mid_eu"},
		{[]string{"--filter", "T_ZETA", "--sort", "lag"}, "zeta"},
		{[]string{"--filter", "nothing like it"}, ""},
	} {
		args := append([]string{"job", "list"}, c.args...)
		code, out, errOut := run(t, env, args...)
		if code != 0 || names(out) != c.want {
			t.Errorf("%s: exit %d, jobs %q, want %q; stderr %q", strings.Join(args, " "), code, names(out), c.want, errOut)
		}
	}
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--sort", "colour"}, `job list: --sort "colour" must be one of id, name, state`},
		{[]string{"--limit", "-1"}, "job list: --limit -1 must be >= 0"},
		{[]string{"--filter", strings.Repeat("x", 1025)}, "job list: --filter of 1025 bytes: at most 1024"},
	} {
		args := append([]string{"job", "list"}, c.args...)
		if code, _, errOut := run(t, env, args...); code != exitUsage || !strings.Contains(errOut, c.says) {
			t.Errorf("%.60s: exit %d, stderr %q, want %d saying %q", fmt.Sprint(args), code, errOut, exitUsage, c.says)
		}
	}
}
