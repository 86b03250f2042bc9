// Package vet holds dosimvet's analyzers: checks, at compile time, of what
// dosim's simulator can catch only at run time (the watchdog of rule H1),
// or never (a wall-clock read that changes an answer, rule D1). They are
// golang.org/x/tools/go/analysis analyzers, so they run under go vet
// (go vet -vettool=$(which dosimvet) ./...), in gopls, and in CI.
//
//   - VirtualTime: time.Now, time.Sleep, time.After, timers and tickers,
//     context.WithTimeout and WithDeadline, math/rand's and
//     math/rand/v2's top-level functions, crypto/rand, os.Getenv, file and
//     network I/O in object code. Each report names dosim's replacement
//     (st.Now(), st.Sleep, runtime.WithTimeout, st.Storage(), a stub).
//   - Scheduler: go statements, channel sends and receives, select,
//     sync.Mutex and RWMutex locks, sync.WaitGroup and sync.Cond waits,
//     spin-waits on sync/atomic loads, runtime.Gosched and Goexit in object
//     code (rule H1's list).
//   - MapOrder: in object code, a range over a map that appends to a slice
//     which is returned, stored or sent as an effect's payload or a call's
//     argument with no sort of it in the function, or that records an
//     effect or makes a stub call in the loop (rule D1).
//   - BrokenStub: in any function, a stub used again after one of its
//     calls failed with an error nobody checked for Remote (rule L2).
//   - UnsafeMark: a heuristic on the functions passed to object.Retryable
//     (rules S6, S7): a read-modify-write of one storage key, or an
//     st.Effect, before any lookup of a key made from an argument.
//
// A //dosimvet:ok comment, best followed by the reason, on the reported
// line or the line above it silences that one report, whichever analyzer
// made it.
//
// # Object code and how far the call graph goes
//
// VirtualTime, Scheduler and MapOrder look only at object code: code that
// runs inside an object's turn. Its roots, found in the package analysed,
// are the functions given to object.Func and object.Retryable (the
// entries of Methods), the Alarm, OnError and ServeHTTP methods of a type
// that has a Methods method, constructors (a function taking a single
// *object.State), and the callbacks given to agent.Retry and
// agent.RetryValue. Schedule and Queue name their callbacks by method
// name, so those are Methods entries already. From the roots the analysis
// follows, within the package, every static call and every function or
// method value referred to (a callback passed on, a method value stored),
// and the function literals inside reached code. It does not follow calls
// through interfaces or through func-typed fields and variables: a method
// reached only that way is not seen.
//
// Across packages it follows calls into packages of the same module as
// the caller: each package exports, as an analysis fact, what each of its
// functions reaches (the first escape found), and a call from object code
// to such a function is reported at the call, naming the escape and where
// it is. Calls into the standard library, into other modules and into
// dosim's own packages (everything of github.com/dosim/dosim but its
// examples) are not followed: dosim's API is the simulation's boundary.
//
// BrokenStub looks at every function, object code or not (a test's root
// function reuses stubs as easily as a method), one function at a time.
// UnsafeMark looks at each function passed to object.Retryable in the
// package, the function literals inside it, and the package's functions
// it calls, two calls deep.
//
// # Flags
//
// The ObjectCode analyzer carries two flags the others read:
// -objectcode.tests=false leaves _test.go files out (dosim's own tests
// plant these bugs on purpose to check the run-time checks; make lint
// uses it), and -objectcode.ok=false reports what //dosimvet:ok comments
// would silence.
package vet
