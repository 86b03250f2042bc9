package cli

import (
	"regexp"
	"strings"

	"github.com/dosim/dosim/internal/quote"
	"github.com/spf13/cobra"
)

// flagName is a flag's name at the start of a line of pflag's usage text
// ("  -s, --seed uint   ..."): read from the text, so that the cli does
// not import pflag, a module it has only through cobra.
var flagName = regexp.MustCompile(`(?m)^\s+(?:-\w, )?--([\w.-]+)`)

// didYouMean is " (did you mean "X"?)" for the candidate close to an
// unknown name given on the command line (quote.Suggest), else "".
func didYouMean(name string, candidates []string) string {
	if s := quote.Suggest(name, candidates); s != "" {
		return " (" + s + ")"
	}
	return ""
}

// flagError is every command's answer to a flag it does not know: pflag's
// message, with the command's flag closest to the one given, as cobra
// suggests commands ("did you mean --seed?"), and exit code 2.
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	name, found := strings.CutPrefix(msg, "unknown flag: --")
	if !found {
		return usageErrorf("%s", msg)
	}
	var names []string
	for _, m := range flagName.FindAllStringSubmatch(cmd.Flags().FlagUsages()+cmd.InheritedFlags().FlagUsages(), -1) {
		names = append(names, m[1])
	}
	if s := quote.Suggest(name, names); s != "" {
		msg += " (" + strings.ReplaceAll(s, `"`, "") + ")"
		msg = strings.Replace(msg, "did you mean ", "did you mean --", 1)
		msg = strings.ReplaceAll(msg, " or ", " or --")
	}
	return usageErrorf("%s", msg)
}
