// Command walletsim is dosim's command line on the wallet class: run,
// explore, verify and amplify, with dosim's flags, formats and exit codes.
package main

import (
	"os"

	"github.com/dosim/dosim/cli"
	"github.com/dosim/dosim/examples/wallet"
	"github.com/dosim/dosim/runtime"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], cli.WithName("walletsim"),
		cli.WithClasses(map[string]runtime.Constructor{"wallet": wallet.New})))
}
