package main

import (
	"errors"
	"io"
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	c, err := parse([]string{"--quick", "--json", "--brokers", "h:1,h:2", "--partitions", "1,8", "--scenarios", "ceiling,e2e", "--runs", "5", "--binary", "/x/loadnode"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !c.opts.Quick || !c.json || !reflect.DeepEqual(c.opts.Brokers, []string{"h:1", "h:2"}) || c.opts.Binary != "/x/loadnode" ||
		!reflect.DeepEqual(c.opts.Partitions, []int{1, 8}) || !reflect.DeepEqual(c.opts.Scenarios, []string{"ceiling", "e2e"}) || c.opts.Runs != 5 {
		t.Fatalf("flags: %+v", c)
	}
	for _, args := range [][]string{
		{"--scenarios", "nope"},
		{"--partitions", "x"},
		{"--records", "-1"},
		{"extra"},
		{"--nope"},
	} {
		if _, err := parse(args, io.Discard); !errors.Is(err, errUsage) {
			t.Errorf("%v: got %v, want a usage error", args, err)
		}
	}
}
