package cli

import (
	"context"
	"io"

	"github.com/spf13/cobra"
)

// Every command keeps what its flags set in an options struct of its own
// (runCmd, exploreCmd, mergeCmd, verifyCmd, amplifyCmd, demoCmd): the
// cobra command only binds the flags to the struct's fields and calls
// runE, which hands the struct the command's arguments, checks them
// (validate: nothing has run or been written when it fails) and runs it.

// options is a command's options struct.
type options interface {
	// bind takes the command's arguments and a way to tell which flags
	// were given (a flag's zero value and its absence differ for some).
	bind(args []string, given func(flag string) bool)
	// validate checks the flags and reads the inputs; its error names the
	// flag or the file, and nothing has run.
	validate() error
	// run does the command's work.
	run(env) error
}

// env is where a command runs: its context and where it writes.
type env struct {
	ctx       context.Context
	out, errw io.Writer
}

// runE is the RunE of the command whose options are o.
func runE(o options) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		o.bind(args, cmd.Flags().Changed)
		if err := o.validate(); err != nil {
			return err
		}
		return o.run(env{ctx: cmd.Context(), out: cmd.OutOrStdout(), errw: cmd.ErrOrStderr()})
	}
}
