package cli

import (
	"runtime/debug"
	"strings"
)

// version overrides what the build says about itself when set at build
// time with -ldflags "-X github.com/dosim/dosim/cli.version=..." (it was
// main.version when the command line lived in cmd/dosim).
var version = ""

// versionText says which dosim this is: the -ldflags version when set, else
// the main module's version as the go command stamped it (v1.2.3 from
// go install ...@v1.2.3, a pseudo-version from a build in a git checkout),
// then the VCS revision and whether the tree had uncommitted changes. With
// nothing known it says "dev".
func versionText(ldflags string, info *debug.BuildInfo, ok bool) string {
	v := ldflags
	var rev string
	var modified bool
	if ok && info != nil {
		if v == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if v == "" {
		v = "dev"
	}
	if rev == "" {
		return v
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	parts := []string{"commit " + rev}
	if modified {
		parts = append(parts, "modified")
	}
	return v + " (" + strings.Join(parts, ", ") + ")"
}

// buildVersion is versionText of this binary.
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	return versionText(version, info, ok)
}
