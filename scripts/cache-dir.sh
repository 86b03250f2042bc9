# Sourced by the install scripts: prints dosim's folder in the user cache
# directory, where the tests look for what the scripts install (Go's
# os.UserCacheDir: ~/Library/Caches on macOS, else $XDG_CACHE_HOME or
# ~/.cache), followed by /dosim.
dosim_cache_dir() {
	case "$(uname -s)" in
	Darwin) echo "$HOME/Library/Caches/dosim" ;;
	*) echo "${XDG_CACHE_HOME:-$HOME/.cache}/dosim" ;;
	esac
}
