package main

import (
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/dosim/dosim/examples"
	"github.com/dosim/dosim/runtime"
	"github.com/spf13/cobra"
)

const exitCodesHelp = `
Exit codes:
  0  ok
  1  an expectation failed
  2  a usage or input error`

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "dosim",
		Short: "A deterministic simulator of Durable-Object-style actors",
		Long: `dosim runs Durable-Object-style objects in virtual time from one seed: calls,
retries, lost requests and lost replies, so that a failing seed replays exactly.` + exitCodesHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newDemo(), newVersion())
	return root
}

func newVersion() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print dosim's version",
		Long:  "Print dosim's version." + exitCodesHelp,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), "dosim", version)
			return nil
		},
	}
}

func newDemo() *cobra.Command {
	var seed uint64
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the built-in inventory demo and print every call and attempt",
		Long: `Run the built-in inventory demo: three shops stocked with SetQuantity (marked
Retryable) and bumped by concurrent AddOne calls (not marked), with the first
reply to the "apple" shop lost. The table shows each call and attempt.` + exitCodesHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rt := runtime.New(runtime.WithSeed(seed), runtime.WithFaults(examples.DemoFaults()))
			defer rt.Close()
			ns := rt.Namespace("INVENTORY", examples.NewInventory)
			var stock map[string]int
			err := rt.Run(func(ctx context.Context) error {
				var err error
				stock, err = examples.Demo(ctx, rt, ns)
				return err
			})
			if err != nil {
				return &codeError{code: exitInternal, msg: fmt.Sprintf("dosim demo (seed %d): %v", seed, err)}
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "dosim demo, seed %d\n\n", seed)
			if err := runtime.WriteTable(out, rt.Calls()); err != nil {
				return err
			}
			shops := make([]string, 0, len(stock))
			for s := range stock {
				shops = append(shops, s)
			}
			sort.Strings(shops)
			fmt.Fprintln(out)
			for _, s := range shops {
				fmt.Fprintf(out, "%s: stock %d\n", s, stock[s])
			}
			return nil
		},
	}
	cmd.Flags().Uint64Var(&seed, "seed", 1, "the simulation's seed")
	return cmd
}
