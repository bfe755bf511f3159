package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/internal/testnode"
)

// cli runs the loadnode binary as a client command against p.
func cli(t *testing.T, p *testnode.Proc, args ...string) (int, string) {
	t.Helper()
	return cliIn(t, p, "", args...)
}

// sqlOut runs a statement with `loadnode sql` against p and returns its
// output; a statement that fails fails t.
func sqlOut(t *testing.T, p *testnode.Proc, stmt string) string {
	t.Helper()
	code, out := cli(t, p, "sql", stmt)
	if code != 0 {
		t.Fatalf("sql %q: exit %d\n%s", stmt, code, out)
	}
	return out
}

// cliIn is cli with stdin.
func cliIn(t *testing.T, p *testnode.Proc, stdin string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, loadnodeBinary(t), append(args, "--addr", p.Addr())...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

// saslBroker is a kfake broker that requires SASL/PLAIN as user loader.
// A wrong password is answered as Kafka answers it (SASL_AUTHENTICATION_
// FAILED with a message, KIP-152); kfake alone closes the connection.
func saslBroker(t *testing.T, topic, pass string) *testnode.Broker {
	t.Helper()
	b := testnode.StartBrokerOpts(t, testnode.BrokerOptions{Seed: []kfake.Opt{
		kfake.SeedTopics(1, topic), kfake.EnableSASL(), kfake.Superuser("PLAIN", "loader", pass),
	}})
	c := b.Cluster()
	c.ControlKey(int16(kmsg.SASLAuthenticate), func(kr kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kr.(*kmsg.SASLAuthenticateRequest)
		if bytes.Equal(req.SASLAuthBytes, []byte("\x00loader\x00"+pass)) {
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		msg := "Authentication failed: Invalid username or password"
		resp.ErrorMessage = &msg
		return resp, nil, true
	})
	return b
}

func saslSpec(name, tbl, topic string, b *testnode.Broker, props map[string]string) *api.JobSpec {
	s := jsonSpec(name, tbl, topic, b.Addrs())
	s.Kafka.Properties = map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.username": "loader"}
	for k, v := range props {
		s.Kafka.Properties[k] = v
	}
	return s
}

// TestSecretsRedacted (issue 12, defect 3): sasl.password is used (the job
// runs against a SASL broker) but never shown: not by ShowJob, `job show`
// in any format, SHOW ROUTINE LOAD nor /v1/jobs/NAME; sasl.password_file
// works the same; and the data dir is 0700 with its files 0600.
func TestSecretsRedacted(t *testing.T) {
	const topic, secret = "secret_topic", "pw-Sup3rS3cret-e2e"
	b := saslBroker(t, topic, secret)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	pwFile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := testnode.Start(t, testnode.Options{DataDir: data, HTTP: true})
	c := p.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for name, props := range map[string]map[string]string{
		"inline_pw": {"sasl.password": secret},
		"file_pw":   {"sasl.password_file": pwFile},
	} {
		info, err := c.CreateJob(ctx, saslSpec(name, name+"_rows", topic, b, props))
		if err != nil {
			t.Fatalf("create %s: %v", name, err)
		}
		if strings.Contains(info.String(), secret) {
			t.Errorf("create %s answers the password: %s", name, info)
		}
		waitFor(t, 30*time.Second, name+" running", func() (bool, string) {
			info := showJob(t, c, name)
			return info.Summary.State == api.JobState_RUNNING, info.Summary.String()
		})
		if got := showJob(t, c, name).String(); strings.Contains(got, secret) {
			t.Errorf("ShowJob %s shows the password: %s", name, got)
		}
		for _, o := range []string{"text", "yaml", "json"} {
			code, out := cli(t, p, "job", "show", name, "-o", o)
			if code != 0 || strings.Contains(out, secret) {
				t.Errorf("job show %s -o %s: exit %d, shows the password: %v\n%s", name, o, code, strings.Contains(out, secret), out)
			}
		}
		for _, stmt := range []string{"SHOW ROUTINE LOAD FOR " + name, "SHOW ROUTINE LOAD", "SHOW CREATE ROUTINE LOAD FOR " + name} {
			code, out := cli(t, p, "sql", stmt)
			if code != 0 || strings.Contains(out, secret) {
				t.Errorf("%s: exit %d, shows the password: %v\n%s", stmt, code, strings.Contains(out, secret), out)
			}
		}
		resp, err := http.Get("http://" + p.AdminAddr() + "/v1/jobs/" + name)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || strings.Contains(string(body), secret) {
			t.Errorf("/v1/jobs/%s: %d, shows the password: %v", name, resp.StatusCode, strings.Contains(string(body), secret))
		}
	}
	// An alter with the shown (redacted) spec keeps the password usable.
	shown := showJob(t, c, "inline_pw").GetSpec()
	shown.MaxBatchRows = 4000
	if _, err := c.AlterJob(ctx, "inline_pw", shown, nil); err != nil {
		t.Fatalf("alter with the shown spec: %v", err)
	}
	if _, err := c.PauseJob(ctx, "inline_pw"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ResumeJob(ctx, "inline_pw"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "running after the alter", func() (bool, string) {
		info := showJob(t, c, "inline_pw")
		return info.Summary.State == api.JobState_RUNNING && info.Spec.MaxBatchRows == 4000, info.Summary.String()
	})

	checkPrivate(t, data)
}

// checkPrivate fails unless dir is 0700 and every file under it 0600 (and
// every directory 0700).
func checkPrivate(t *testing.T, dir string) {
	t.Helper()
	err := filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		want := os.FileMode(0o600)
		if fi.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s is %v, want %v", path, fi.Mode().Perm(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSASLFailureIsConfigError (issue 12, defect 7): a wrong SASL password
// pauses the job with SOURCE_CONFIG_ERROR and a reason that says
// authentication failed, at once, instead of retrying it as transient.
func TestSASLFailureIsConfigError(t *testing.T) {
	const topic = "sasl_topic"
	b := saslBroker(t, topic, "right-password")
	p := startNode(t, t.TempDir())
	c := p.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.CreateJob(ctx, saslSpec("wrong_pw", "wrong_pw_rows", topic, b, map[string]string{"sasl.password": "wrong-password"})); err != nil {
		t.Fatal(err)
	}
	var info *api.JobInfo
	waitFor(t, 20*time.Second, "pause with SOURCE_CONFIG_ERROR", func() (bool, string) {
		info = showJob(t, c, "wrong_pw")
		return info.Summary.State == api.JobState_PAUSED && info.Summary.Reason == api.Reason_SOURCE_CONFIG_ERROR, info.Summary.String()
	})
	if m := info.Summary.ReasonMessage; !strings.Contains(m, "SASL authentication failed (check sasl.username and sasl.password") {
		t.Errorf("reason does not say SASL authentication failed: %s", info.Summary.ReasonMessage)
	}
	t.Logf("paused: %s", info.Summary.ReasonMessage)

	// A running job altered to a wrong password (a rotation gone wrong)
	// pauses the same way once its reader reconnects.
	if _, err := c.CreateJob(ctx, saslSpec("rotated", "rotated_rows", topic, b, map[string]string{"sasl.password": "right-password"})); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "running", func() (bool, string) {
		info = showJob(t, c, "rotated")
		return info.Summary.State == api.JobState_RUNNING, info.Summary.String()
	})
	spec := showJob(t, c, "rotated").GetSpec()
	spec.Kafka.Properties["sasl.password"] = "rotated-wrong"
	if _, err := c.AlterJob(ctx, "rotated", spec, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "pause with SOURCE_CONFIG_ERROR after the alter", func() (bool, string) {
		info = showJob(t, c, "rotated")
		return info.Summary.State == api.JobState_PAUSED && info.Summary.Reason == api.Reason_SOURCE_CONFIG_ERROR, info.Summary.String()
	})
	if m := info.Summary.ReasonMessage; !strings.Contains(m, "SASL authentication failed") {
		t.Errorf("reason does not say SASL authentication failed: %s", m)
	}
	t.Logf("paused: %s", info.Summary.ReasonMessage)
}

// TestMessageLimits (issue 12, defects 4 and 6): a scan of wide rows pages
// by bytes (80 rows of 900 KB were one 72 MB answer, past the client's
// limit: "no answer within 10s"); a request over the node's limit and an
// argument that is not valid UTF-8 fail at once with a clear error
// instead of a 10 s timeout.
func TestMessageLimits(t *testing.T) {
	const topic, name, tbl, n = "wide", "wide_load", "wide_rows", 80
	b := testnode.StartBroker(t, 1, topic)
	note := strings.Repeat("w", 900<<10)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := range n {
		rec := &kgo.Record{Topic: topic, Value: fmt.Appendf(nil, `{"id":%d,"note":"%s"}`, i, note)}
		if err := b.Client().ProduceSync(ctx, rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	p := startNode(t, t.TempDir())
	c := p.Client(t)
	if _, err := c.CreateJob(ctx, jsonSpec(name, tbl, topic, b.Addrs())); err != nil {
		t.Fatal(err)
	}
	waitDrained(t, c, b, name, topic, 60*time.Second)
	if rows := scanAll(t, c, tbl); len(rows) != n {
		t.Fatalf("scanned %d rows, want %d", len(rows), n)
	}
	start := time.Now()
	code, out := cli(t, p, "table", "scan", tbl, "--limit", "70", "--format", "jsonl")
	if code != 0 || strings.Count(out, "\n") < 70 {
		t.Fatalf("table scan --limit 70: exit %d, %d lines: %.300s", code, strings.Count(out, "\n"), out)
	}
	t.Logf("table scan --limit 70 of 900 KB rows: %s", time.Since(start).Round(time.Millisecond))

	var ys strings.Builder
	ys.WriteString("name: big_spec\ntable: {name: big_spec_rows, columns: [{name: id, type: int64}]}\nformat: csv\nkafka:\n  brokers: [\"127.0.0.1:1\"]\n  topic: t\n  partitions: [")
	for i := range 100_000 {
		if i > 0 {
			ys.WriteString(",")
		}
		fmt.Fprintf(&ys, "%d", i)
	}
	ys.WriteString("]\n")
	bigSpec := ys.String()
	big := "CREATE TABLE big (id BIGINT, note STRING) COMMENT '" + strings.Repeat("x", 5<<20) + "'"
	for what, run := range map[string]struct {
		stdin string
		args  []string
	}{
		"not valid UTF-8":                  {"", []string{"job", "show", "bad\xffname"}},
		"statement longer than":            {big, []string{"sql", "-"}},
		"partitions listed; at most 65536": {bigSpec, []string{"job", "create", "-f", "-"}},
	} {
		start := time.Now()
		code, out := cliIn(t, p, run.stdin, run.args...)
		if d := time.Since(start); code == 0 || !strings.Contains(out, what) || d > 5*time.Second {
			t.Errorf("%s: exit %d after %s: %.300s", what, code, d.Round(time.Millisecond), out)
		}
	}
	spec := jsonSpec("many_props", "many_props_rows", topic, b.Addrs())
	spec.Kafka.Properties = map[string]string{}
	for i := range 300_000 {
		spec.Kafka.Properties[fmt.Sprintf("x.property.%d", i)] = "value"
	}
	start = time.Now()
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.CreateJob(ctx, spec); err == nil || !strings.Contains(err.Error(), "over the node's limit") || time.Since(start) > 5*time.Second {
		t.Errorf("300,000 properties: %v after %s", err, time.Since(start))
	}
}
