package explore_test

import (
	"os"
	"testing"

	"github.com/dosim/dosim/examples/zoo"
	"github.com/dosim/dosim/explore"
)

func TestDbgOne(t *testing.T) {
	b, _ := zoo.Lookup(os.Getenv("BUG"))
	d := b.Buggy
	if os.Getenv("FIXED") != "" {
		d = b.Fixed
	}
	o := zooOptions(b, strategies[0], 1, 3000)
	fe, err := explore.NewFunc(o, d)
	if err != nil {
		t.Fatal(err)
	}
	sum := fe.Sweep()
	f := sum.FirstFailing
	if f == nil {
		t.Fatal("clean")
	}
	t.Log(f.Seed, f.Violations, f.Shrunk)
	r := fe.Rerun(f)
	_ = r.WriteTimeline(os.Stdout)
}
