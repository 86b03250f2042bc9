package sched_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/dosim/dosim/internal/sched"
)

// Two tasks sleep in virtual time: the kernel runs one at a time, jumps
// straight to the next wake-up, and a ten-second sleep costs nothing.
func Example() {
	k := sched.New(rand.New(rand.NewPCG(7, 7)))
	defer k.Close()
	for _, d := range []time.Duration{10 * time.Second, 3 * time.Second} {
		k.Go(context.Background(), fmt.Sprint("sleeper ", d), func(ctx context.Context) {
			_ = sched.FromContext(ctx).Sleep(ctx, d)
			fmt.Printf("woke after %v at %v\n", d, k.Now())
		})
	}
	stop, err := k.Drive(-1)
	fmt.Println(stop == sched.Drained, err)
	// Output:
	// woke after 3s at 3s
	// woke after 10s at 10s
	// true <nil>
}
