// Command dosim runs Durable-Object-style actor scenarios in a deterministic
// simulator: dosim run FILE... runs scenario files (docs/scenarios.md) and
// shows a timeline, JSON, a Mermaid diagram or an HTML page; dosim explore
// searches a scenario's fault space; dosim verify checks that methods
// marked Retryable are idempotent; dosim amplify shows how retries
// multiply with an application's own loop; dosim demo runs the built-in
// inventory demo.
//
// It is package cli's Main on dosim's built-in classes: a program of yours
// gets the same commands on your own classes with cli.WithClasses.
//
// Exit codes: 0 ok; 1 an expectation failed, explore found a violation,
// verify found a marked method that is not idempotent, or the code under
// test stopped a run or an amplify trial (a stall, runtime.Goexit); 2 a
// usage or input error, or output that could not be written; 3 the
// simulation itself failed; 130 (143) explore stopped by SIGINT (SIGTERM)
// after printing what ran.
package main

import (
	"os"

	"github.com/dosim/dosim/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], cli.WithBuiltInClasses())) }
