package wire

import (
	"testing"
	"unsafe"
)

// TestD2_ARecordIsAtMost128Bytes: every call keeps a record (rule D2), so
// its size is a budget (issue 14: at most 160 bytes retained per record,
// the result's box included). 128 bytes fill a slab of 1,024 records to
// whole pages.
func TestD2_ARecordIsAtMost128Bytes(t *testing.T) {
	if n := unsafe.Sizeof(Call{}); n > 128 {
		t.Errorf("wire.Call is %d bytes, more than 128", n)
	}
	if n := unsafe.Sizeof(Attempt{}); n > 24 {
		t.Errorf("wire.Attempt is %d bytes, more than 24", n)
	}
}

// TestD2_WhatOnlySomeCallsHaveIsKept: a second attempt, errors, lost
// writes and two or more arguments live off the record, and read back.
func TestD2_WhatOnlySomeCallsHaveIsKept(t *testing.T) {
	var c Call
	if c.NumAttempts() != 0 || c.Args() != nil || c.Err() != nil {
		t.Fatal("a zero record has attempts, arguments or an error")
	}
	a1 := c.NewAttempt(5)
	if c.more != nil {
		t.Fatal("a first attempt allocated the record's extra part")
	}
	a2 := c.NewAttempt(7)
	c.SetAttemptErr(a2, errTest)
	c.LoseWrite(a1)
	c.LoseWrite(a1)
	copy(c.NewArgs(2), []any{1, "two"})
	c.SetErr(errTest)
	if c.NumAttempts() != 2 || c.Attempt(0) != a1 || c.Attempt(1) != a2 || a2.N != 2 || a2.Start != 7 {
		t.Fatalf("attempts: %d, %+v %+v", c.NumAttempts(), c.Attempt(0), c.Attempt(1))
	}
	if c.AttemptErr(a1) != nil || c.AttemptErr(a2) != errTest || c.Err() != errTest {
		t.Fatal("errors not kept per attempt")
	}
	if c.LostWrites(a1) != 2 || c.LostWrites(a2) != 0 {
		t.Fatalf("lost writes: %d, %d", c.LostWrites(a1), c.LostWrites(a2))
	}
	if args := c.Args(); len(args) != 2 || args[1] != "two" {
		t.Fatalf("args: %v", args)
	}
	var one Call
	if got := one.SetArg("x"); len(got) != 1 || one.Args()[0] != "x" {
		t.Fatalf("one argument: %v", one.Args())
	}
	for n := 2; n <= 5; n++ {
		var c Call
		args := c.NewArgs(n)
		args[n-1] = n
		if got := c.Args(); len(got) != n || got[n-1] != n {
			t.Fatalf("%d arguments: %v", n, got)
		}
	}
	a3 := c.NewAttempt(9)
	c.SetAttemptErr(a3, errTest)
	if c.NumAttempts() != 3 || c.Attempt(2) != a3 || a3.N != 3 || c.AttemptErr(a3) != errTest || c.AttemptErr(a2) != errTest {
		t.Fatalf("third attempt: %d %+v", c.NumAttempts(), c.Attempt(2))
	}
}

type testErr struct{}

func (testErr) Error() string { return "test" }

var errTest error = testErr{}
